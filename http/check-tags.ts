// Check tags: `GET|POST|PUT|DELETE /meta/check/tag/<check_uuid>` (irondb-reference §10), as
// gosnowth's GetCheckTags / UpdateCheckTags / DeleteCheckTags use them. Replies are
// `{"<check_uuid>": [tags]}`. The account comes from x-svc-account-id or the path form
// `/meta/check/tag/<account>/<check_uuid>`; without one the tags apply in every account.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { changeCheckTags, checkTagsOf, type CheckTagChange } from '../actors/coordinators/check-tags.js';
import type { FerriteNode } from '../actors/node/node.js';
import { normalizeUuid, parseAccountId } from '../model/check-field.js';
import { parseCheckTags, type CheckTagScope } from '../model/check-tags.js';
import { ferr } from '../model/errors.js';
import { accountHeader } from './headers.js';
import { bodyText } from './request.js';

interface Target {
  scope: CheckTagScope;
  uuid: string;
}

export async function checkTagRoutes(app: FastifyInstance, opts: { node: FerriteNode }): Promise<void> {
  const { node } = opts;
  for (const path of ['/meta/check/tag/:uuid', '/meta/check/tag/:account/:uuid']) {
    app.get(path, async (req) => {
      const { scope, uuid } = target(req);
      return { [uuid]: await checkTagsOf(node, scope, uuid) };
    });
    app.route({
      method: ['POST', 'PUT'],
      url: path,
      handler: async (req) => {
        const { scope, uuid } = target(req);
        return { [uuid]: await changeCheckTags(node, scope, uuid, changeOf(bodyText(req))) };
      },
    });
    app.delete(path, async (req) => {
      const { scope, uuid } = target(req);
      return { [uuid]: await changeCheckTags(node, scope, uuid, { add: [], remove: [], clear: true }) };
    });
  }
}

function target(req: FastifyRequest): Target {
  const p = req.params as { account?: string; uuid: string };
  const uuid = normalizeUuid(p.uuid);
  if (uuid === null) throw ferr('FER_ERR_BAD_UUID', `'${p.uuid}'`);
  if (p.account === undefined) return { scope: accountHeader(req), uuid };
  const account = parseAccountId(p.account);
  if (account === null) throw ferr('FER_ERR_BAD_PARAM', 'account_id', `'${p.account}' is not a non-negative integer`);
  return { scope: account, uuid };
}

/** `{"add": [...], "remove": [...]}`, either list optional. */
function changeOf(text: string): CheckTagChange {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (error) {
    throw ferr('FER_ERR_BAD_BODY', `the body is not JSON: ${(error as Error).message}`);
  }
  if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw ferr('FER_ERR_BAD_BODY', 'the body must be {"add": [tags], "remove": [tags]}');
  const lists = doc as Record<string, unknown>;
  const unknown = Object.keys(lists).filter((k) => k !== 'add' && k !== 'remove');
  if (unknown.length > 0) throw ferr('FER_ERR_BAD_BODY', `unknown field '${unknown[0]}' (only "add" and "remove")`);
  return { add: tagList(lists.add, 'add'), remove: tagList(lists.remove, 'remove'), clear: false };
}

function tagList(v: unknown, field: string): string[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || !v.every((t) => typeof t === 'string')) throw ferr('FER_ERR_BAD_BODY', `'${field}' must be an array of "category:value" strings`);
  const parsed = parseCheckTags(v as string[]);
  if (!parsed.ok) throw ferr('FER_ERR_BAD_BODY', `'${field}': ${parsed.reason}`);
  return parsed.tags;
}
