// Errors crossing between a shard worker and the node: a FerriteError keeps its code (and
// so its status and message), anything else its name and message.
import { ERRORS, FerriteError, type ErrorCode } from '../../model/errors.js';
import type { WireError } from './messages.js';

export function toWireError(error: unknown): WireError {
  if (error instanceof FerriteError) return { name: error.name, message: error.message, code: error.code };
  if (error instanceof Error) return { name: error.name, message: error.message };
  return { name: 'Error', message: String(error) };
}

export function fromWireError(w: WireError): Error {
  if (w.code !== undefined && w.code in ERRORS) return FerriteError.withMessage(w.code as ErrorCode, w.message);
  const error = new Error(w.message);
  error.name = w.name;
  return error;
}
