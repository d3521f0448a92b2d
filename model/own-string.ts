// A copy of a string that shares no memory with the text it was cut from. V8 keeps a slice
// of a long string (a line of a request body) as a pointer into it, so one cached metric
// name would keep its whole request body alive; names that outlive their request are
// copied first. UTF-16 round trip: every code unit survives, lone surrogates included.
export function ownString(s: string): string {
  return Buffer.from(s, 'utf16le').toString('utf16le');
}
