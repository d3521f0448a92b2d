// C's `%a`: a double as a hexadecimal floating literal (`0x1.8p+1` for 3), exact to the bit.
// The histogram read's `format=hex` labels bins with it (docs: README "Reads").

/** `printf("%a", d)` as glibc writes it: shortest mantissa digits, `0x0p+0` for zero, `nan`, `inf`. */
export function hexFloat(d: number): string {
  if (Number.isNaN(d)) return 'nan';
  const sign = d < 0 || Object.is(d, -0) ? '-' : '';
  if (!Number.isFinite(d)) return `${sign}inf`;
  if (d === 0) return `${sign}0x0p+0`;
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, Math.abs(d));
  const bits = view.getBigUint64(0);
  const biased = Number(bits >> 52n);
  const fraction = bits & ((1n << 52n) - 1n);
  // Subnormals have no implicit leading 1 and the smallest exponent.
  const [lead, exp] = biased === 0 ? ['0', -1022] : ['1', biased - 1023];
  const digits = fraction.toString(16).padStart(13, '0').replace(/0+$/, '');
  return `${sign}0x${lead}${digits === '' ? '' : `.${digits}`}p${exp < 0 ? '-' : '+'}${Math.abs(exp)}`;
}
