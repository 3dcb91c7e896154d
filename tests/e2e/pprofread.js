// Read a pprof profile with a pprof reader that is not rsp's own code:
// the npm package pprof-format (scripts/pprof-format.sh installs it), and
// node's zlib for the gzip. Checks what go tool pprof's CheckValid checks
// (ids nonzero, unique and resolvable, one value per sample type,
// string_table[0] ""), then prints the profile as JSON for tests/e2e/pprof.py:
//   {"sample_types": [[type, unit]], "default_type", "period_type", "period",
//    "duration_nanos", "time_nanos", "comments": [],
//    "mappings": [{"file", "build_id", "start", "limit", "has_functions"}],
//    "samples": [{"stack": [leaf first], "objects": [...], "addrs": [...],
//                 "values": [...], "labels": {k: str}, "num": {k: [num, unit]}}]}
// usage: node pprofread.js PPROF_FORMAT_DIR FILE   (FILE "-": stdin)
'use strict';
const fs = require('fs');
const zlib = require('zlib');
const { Profile } = require(process.argv[2]);

function die(msg) {
  process.stdout.write(JSON.stringify({ error: msg }) + '\n');
  process.exit(1);
}

const raw = fs.readFileSync(process.argv[3] === '-' ? 0 : process.argv[3]);
if (raw.length < 2 || raw[0] !== 0x1f || raw[1] !== 0x8b)
  die('not gzip-compressed, as pprof files must be');
let p;
try {
  p = Profile.decode(zlib.gunzipSync(raw));
} catch (e) {
  die('pprof-format cannot decode it: ' + e.message);
}
const S = p.stringTable.strings;
const str = (i) => {
  const n = Number(i);
  if (!(n >= 0 && n < S.length)) die('string index ' + n + ' out of the table');
  return S[n];
};
if (S[0] !== '') die('string_table[0] is not ""');

function byId(list, what) {
  const m = new Map();
  for (const x of list) {
    const id = Number(x.id);
    if (!id) die(what + ' with id 0');
    if (m.has(id)) die(what + ' id ' + id + ' twice');
    m.set(id, x);
  }
  return m;
}
const maps = byId(p.mapping, 'mapping');
const funcs = byId(p.function, 'function');
const locs = byId(p.location, 'location');
for (const l of p.location) {
  if (Number(l.mappingId) && !maps.has(Number(l.mappingId)))
    die('location ' + l.id + ' names mapping ' + l.mappingId + ', which is not there');
  for (const ln of l.line)
    if (!funcs.has(Number(ln.functionId)))
      die('location ' + l.id + ' names function ' + ln.functionId + ', which is not there');
}
const out = {
  sample_types: p.sampleType.map((t) => [str(t.type), str(t.unit)]),
  default_type: str(p.defaultSampleType),
  period_type: p.periodType ? [str(p.periodType.type), str(p.periodType.unit)] : null,
  period: Number(p.period),
  duration_nanos: Number(p.durationNanos),
  time_nanos: Number(p.timeNanos),
  comments: p.comment.map(str),
  mappings: p.mapping.map((m) => ({
    file: str(m.filename), build_id: str(m.buildId), start: Number(m.memoryStart),
    limit: Number(m.memoryLimit), has_functions: !!m.hasFunctions })),
  samples: [],
};
for (const s of p.sample) {
  if (s.value.length !== p.sampleType.length)
    die('a sample has ' + s.value.length + ' values for ' + p.sampleType.length + ' types');
  const o = { stack: [], objects: [], addrs: [], values: s.value.map(Number), labels: {}, num: {} };
  for (const id of s.locationId) {
    const l = locs.get(Number(id));
    if (!l) die('a sample names location ' + id + ', which is not there');
    const m = maps.get(Number(l.mappingId));
    for (const ln of l.line) {
      o.stack.push(str(funcs.get(Number(ln.functionId)).name));
      o.objects.push(m ? str(m.filename) : null);
      o.addrs.push(Number(l.address));
    }
  }
  for (const lb of s.label) {
    const k = str(lb.key);
    if (Number(lb.str)) o.labels[k] = str(lb.str);
    else o.num[k] = [Number(lb.num), str(lb.numUnit)];
  }
  out.samples.push(o);
}
process.stdout.write(JSON.stringify(out) + '\n');
