// OTLP/HTTP metrics bodies: an ExportMetricsServiceRequest as protobuf (metrics.proto beside
// this file, decoded by protobufjs) or as the OTLP JSON mapping, and the
// ExportMetricsServiceResponse in the request's encoding. Pure: bytes in, plain objects out.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { readProtobufRequest } from './protobuf.js';
import { readRequest } from './request.js';
import { OtlpFormatError, type ResourceMetrics } from './types.js';

export type OtlpEncoding = 'protobuf' | 'json';

// The .proto stays the source of truth; the build leaves it in model/, beside this module's source.
const PROTO = fileURLToPath(new URL('../../../model/otlp/metrics.proto', import.meta.url));
const root = protobuf.parse(readFileSync(PROTO, 'utf8')).root;
export const ExportRequest = root.lookupType('otlp.ExportMetricsServiceRequest');
const ExportResponse = root.lookupType('otlp.ExportMetricsServiceResponse');

/** A request body: protobuf walked by protobuf.ts, JSON read by request.ts. */
export function decodeRequest(body: Uint8Array, encoding: OtlpEncoding): ResourceMetrics[] {
  return encoding === 'protobuf' ? readProtobufRequest(body) : readRequest(decodeJson(body));
}

/** protobufjs' own decoding of the request as metrics.proto declares it, read by request.ts (tests compare protobuf.ts with it). */
export function decodeRequestByReflection(body: Uint8Array): ResourceMetrics[] {
  return readRequest(decodeProtobuf(body));
}

function decodeProtobuf(body: Uint8Array): unknown {
  try {
    return ExportRequest.decode(body);
  } catch (error) {
    throw new OtlpFormatError(`not an ExportMetricsServiceRequest protobuf message: ${(error as Error).message}`);
  }
}

function decodeJson(body: Uint8Array): unknown {
  try {
    return JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (error) {
    throw new OtlpFormatError(`not JSON: ${(error as Error).message}`);
  }
}

export interface PartialSuccess {
  rejectedDataPoints: number;
  errorMessage: string;
}

/** The response: empty when every point was accepted, else `partial_success` filled in. */
export function encodeResponse(partial: PartialSuccess | null, encoding: OtlpEncoding): Buffer {
  if (encoding === 'json') {
    // int64 is a decimal string in the protobuf JSON mapping.
    const body = partial === null ? {} : { partialSuccess: { rejectedDataPoints: String(partial.rejectedDataPoints), errorMessage: partial.errorMessage } };
    return Buffer.from(JSON.stringify(body));
  }
  const message = partial === null ? {} : { partialSuccess: partial };
  return Buffer.from(ExportResponse.encode(ExportResponse.fromObject(message)).finish());
}

/** Test and bench helper: a request object (protobufjs JSON-like form) as protobuf bytes. */
export function encodeRequest(message: Record<string, unknown>): Uint8Array {
  return ExportRequest.encode(ExportRequest.fromObject(message)).finish();
}

export function decodeResponse(body: Uint8Array, encoding: OtlpEncoding): PartialSuccess | null {
  const message = (encoding === 'json' ? JSON.parse(Buffer.from(body).toString('utf8')) : ExportResponse.toObject(ExportResponse.decode(body), { longs: Number })) as {
    partialSuccess?: { rejectedDataPoints?: string | number; errorMessage?: string };
  };
  if (message.partialSuccess === undefined) return null;
  return { rejectedDataPoints: Number(message.partialSuccess.rejectedDataPoints ?? 0), errorMessage: message.partialSuccess.errorMessage ?? '' };
}
