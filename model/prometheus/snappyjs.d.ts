// Types for snappyjs (pure-JS snappy block format), which ships none.
declare module 'snappyjs' {
  function compress<T extends Uint8Array | ArrayBuffer>(uncompressed: T): T;
  function uncompress<T extends Uint8Array | ArrayBuffer>(compressed: T, maxLength?: number): T;
  const SnappyJS: { compress: typeof compress; uncompress: typeof uncompress };
  export default SnappyJS;
}
