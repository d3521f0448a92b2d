// What a joining node forwards (http/join-forward.ts): requests for data go to a node not yet
// running its topology; requests about the node and the cluster are answered by the node itself.
// The forwarding itself runs on the real rig in test/rebalance-continuous.test.ts.
import test from 'ava';
import { isLocalPath } from '../http/join-forward.js';

test('requests about the node, the cluster, the console and the API docs are answered locally', (t) => {
  for (const url of ['/', '/state', '/stats.json', '/gossip/json', '/topology/json/abc', '/toporing/xml/abc', '/locate/json/u/m', '/rebalance/state', '/rebalance/activate/abc', '/admin/backup', '/console/api/nodes', '/api/', '/api/json', '/api/index.html', '/api/static/swagger-ui.css', '/index.html', '/main.js', '/state?x=1']) {
    t.true(isLocalPath(url), url);
  }
});

test('requests for data are forwarded', (t) => {
  for (const url of ['/raw', '/raw/uuid/metric?start_ts=0.000&end_ts=1.000', '/read/0/1/uuid/m', '/rollup/uuid/m', '/histogram/0/1/60/u/m', '/histogram/write', '/fetch', '/find/1/tags?query=and(a:b)', '/write/text', '/write/nnt', '/full/tags', '/meta/check/tag/u', '/extension/lua/caql_v1', '/graphite/1/metrics/find', '/api/v1/query', '/api/put', '/v1/metrics', '/module/prometheus/write/1/u', '/opentsdb/1/u/c', '/text/u/m']) {
    t.false(isLocalPath(url), url);
  }
});
