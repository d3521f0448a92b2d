// Branded primitives: a value's type says what it is, not just how it is stored.

/** Milliseconds since the Unix epoch. */
export type EpochMs = number & { readonly __brand: 'EpochMs' };
/** Seconds since the Unix epoch. */
export type EpochSec = number & { readonly __brand: 'EpochSec' };
/** `lower(uuid) + "-" + canonical name`: the key IRONdb hashes to place a metric. */
export type MetricKey = string & { readonly __brand: 'MetricKey' };
/** An account id, taken from the check name `c_<account>_<bundle>::<module>`. */
export type AccountId = number & { readonly __brand: 'AccountId' };

export const asEpochMs = (n: number): EpochMs => n as EpochMs;
export const asEpochSec = (n: number): EpochSec => n as EpochSec;

/**
 * A numeric sample value. Integers beyond ±2^53 (int64/uint64 submissions) are kept
 * exact as bigint; everything else is a double. `null` is an explicit `[[null]]`.
 */
export type NumericValue = number | bigint | null;

/** A stored sample's value: numeric, or text (histograms are stored as their submitted text). */
export type BufferValue = NumericValue | string;
