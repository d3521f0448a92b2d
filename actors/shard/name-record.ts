// A metric's name record as searches report it (the stored form: storage/metric-index/name-record.ts).
import type { AccountId } from '../../model/types.js';

export interface NameRecord {
  account_id: AccountId;
  uuid: string;
  check_name: string;
  metric_name: string;
}
