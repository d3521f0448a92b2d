// rocksdb-native ships no type declarations; storage/rocks.ts is its only user.
declare module 'rocksdb-native' {
  const RocksDB: any;
  export default RocksDB;
}
