// Scans rendered manifests with Monokle: every Pod Security Standards rule (baseline and the
// restricted profile, off by default in Monokle) and its practices; exits 1 on any finding.
//   npm ci --prefix deploy/scan
//   for o in base overlays/example overlays/strimzi; do kubectl kustomize deploy/k8s/$o > /tmp/$(basename $o).yaml; done
//   node deploy/scan/scan.mjs /tmp/base.yaml /tmp/example.yaml /tmp/strimzi.yaml
import { readFileSync } from 'node:fs';
import { parseAllDocuments } from 'yaml';
import { createDefaultMonokleValidator } from '@monokle/validation';

const files = process.argv.slice(2);
const resources = [];
for (const f of files) {
  const text = readFileSync(f, 'utf8');
  let offset = 0;
  for (const doc of parseAllDocuments(text)) {
    const content = doc.toJS();
    if (!content) continue;
    const docText = String(doc);
    resources.push({
      id: `${f}#${content.kind}/${content.metadata?.name}`,
      fileId: f, filePath: f, fileOffset: doc.range[0],
      name: content.metadata?.name, apiVersion: content.apiVersion, kind: content.kind,
      namespace: content.metadata?.namespace, content, text: docText,
    });
  }
}
const validator = createDefaultMonokleValidator();
await validator.preload({
  plugins: {
    'pod-security-standards': true, 'yaml-syntax': true, 'resource-links': true,
    'kubernetes-schema': false, 'open-policy-agent': false, 'practices': true, 'metadata': false,
  },
  // The "restricted" profile's rules (PSS2xx) are off unless named.
  rules: Object.fromEntries(
    [101,102,103,104,105,106,107,108,109,110,111,201,202,203,204,205,206].map(n => ['PSS' + n, 'err'])),
});
const response = await validator.validate({ resources });
let count = 0;
for (const run of response.runs) {
  for (const r of run.results) {
    count++;
    const loc = r.locations?.[1]?.logicalLocations?.[0]?.fullyQualifiedName ?? '';
    console.log(`${run.tool.driver.name} ${r.ruleId} ${r.level} ${loc}: ${r.message.text}`);
  }
}
console.log(`${resources.length} resources, ${count} findings`);
process.exitCode = count === 0 ? 0 : 1;
