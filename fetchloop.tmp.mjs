// temp: profile /fetch on a kept bench data dir
import { startFerrite } from './dist/bench/peers.js';
import { ferriteName, UUID } from './dist/bench/dataset.js';
const [dir, dayStart, rounds = '100', reduce = 'sum'] = process.argv.slice(2);
const f = await startFerrite(dir);
const body = JSON.stringify({ start: Number(dayStart), period: 60, count: 1440, streams: Array.from({ length: 100 }, (_, m) => ({ uuid: UUID, name: ferriteName(m), kind: 'numeric', transform: 'average', transform_params: [] })), reduce: [{ label: reduce, method: reduce, method_params: [] }] });
const ms = [];
for (let i = 0; i < Number(rounds); i++) { const t0 = performance.now(); const r = await fetch(`${f.url}/fetch`, { method: 'POST', body, headers: { 'content-type': 'application/json' } }); await r.text(); ms.push(performance.now() - t0); }
ms.sort((a, b) => a - b); console.log('median', ms[ms.length >> 1].toFixed(1), 'min', ms[0].toFixed(1), 'p90', ms[Math.floor(ms.length * 0.9)].toFixed(1));
await f.stop();
