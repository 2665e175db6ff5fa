// Independent JavaScript cross-check of memconform's golden vectors.
//
// Usage: node crosscheck.mjs <path to the vectors/ folder>
//
// For every case file under <vectors>/ump/**.json it recomputes, with libraries that share no code
// with the Python generator (canonicalize = RFC 8785, @noble/hashes = BLAKE3, node:crypto = Ed25519
// via OpenSSL, @scure/base = base32/base58/base64):
//   - canonical cases: the I-JSON check, the canonical string and its content hash;
//   - record cases carrying `integrity`: the content hash, the did:key -> public key decoding, the
//     Ed25519 verification, signer == scope.owner, and the content-addressed id;
//   - markdown cases whose expected record is signed: the same integrity checks on that record;
//   - the three test keys: their did:key from the documented seed derivation;
//   - under <vectors>/memoturn/**.json, memoturn-id cases: the canonical content, the text hashed and
//     the content-addressed id, with a JSON writer of its own (keys sorted by code point) and
//     @noble/hashes SHA-256 (memoturn_escaping reports whether JSON.stringify escapes strings exactly
//     as that writer needs, checked over every BMP code unit).
// It prints one JSON document; tests/vectors/test_node_crosscheck.py compares it with the vectors.
// It never decides what a vector *should* say: it only reports what it computes.

import { createHash, createPrivateKey, createPublicKey, verify } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

import canonicalize from 'canonicalize';
import { blake3 } from '@noble/hashes/blake3.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { base32, base58, base64 } from '@scure/base';

const here = dirname(fileURLToPath(import.meta.url));
const utf8 = new TextEncoder();

// ------------------------------------------------------------------ strict I-JSON parser

class NotIJson extends Error {
  constructor(message, pointer) {
    super(message);
    this.pointer = pointer;
  }
}

const escapePointer = (token) => String(token).replaceAll('~', '~0').replaceAll('/', '~1');

function hasLoneSurrogate(s) {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff) {
      const n = i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (!(n >= 0xdc00 && n <= 0xdfff)) return true;
      i++;
    } else if (c >= 0xdc00 && c <= 0xdfff) {
      return true;
    }
  }
  return false;
}

// A small recursive-descent JSON parser (RFC 8259 grammar) that refuses what RFC 8785 §3.1 puts
// outside its domain: duplicate member names, lone surrogates, numbers that are not finite doubles,
// and integer literals that are not exactly an IEEE 754 double.
function parseIJson(text) {
  let i = 0;
  const ws = () => {
    while (i < text.length && ' \t\n\r'.includes(text[i])) i++;
  };
  const fail = (msg, ptr) => {
    throw new NotIJson(`${msg} at offset ${i}`, ptr);
  };
  const NUMBER = /-?(?:0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?/y;

  function string(ptr) {
    if (text[i] !== '"') fail('expected a string', ptr);
    i++;
    let out = '';
    for (;;) {
      if (i >= text.length) fail('unterminated string', ptr);
      const ch = text[i];
      const code = ch.charCodeAt(0);
      if (ch === '"') {
        i++;
        break;
      }
      if (code < 0x20) fail('raw control character in a string', ptr);
      if (ch === '\\') {
        const e = text[i + 1];
        const simple = { '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' };
        if (e in simple) {
          out += simple[e];
          i += 2;
        } else if (e === 'u' && /^[0-9a-fA-F]{4}$/.test(text.slice(i + 2, i + 6))) {
          out += String.fromCharCode(parseInt(text.slice(i + 2, i + 6), 16));
          i += 6;
        } else {
          fail('bad escape', ptr);
        }
      } else {
        out += ch;
        i++;
      }
    }
    if (hasLoneSurrogate(out)) fail('lone surrogate', ptr);
    return out;
  }

  function value(ptr) {
    ws();
    const ch = text[i];
    if (ch === '{') {
      i++;
      const obj = {};
      const seen = new Set();
      ws();
      if (text[i] === '}') {
        i++;
        return obj;
      }
      for (;;) {
        ws();
        const key = string(ptr);
        const childPtr = `${ptr}/${escapePointer(key)}`;
        if (seen.has(key)) fail('duplicate member name', childPtr);
        seen.add(key);
        ws();
        if (text[i] !== ':') fail('expected :', ptr);
        i++;
        const v = value(childPtr);
        // defineProperty so that a member named __proto__ stays an ordinary member
        Object.defineProperty(obj, key, { value: v, enumerable: true, writable: true, configurable: true });
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === '}') {
          i++;
          return obj;
        }
        fail('expected , or }', ptr);
      }
    }
    if (ch === '[') {
      i++;
      const arr = [];
      ws();
      if (text[i] === ']') {
        i++;
        return arr;
      }
      for (;;) {
        arr.push(value(`${ptr}/${arr.length}`));
        ws();
        if (text[i] === ',') {
          i++;
          continue;
        }
        if (text[i] === ']') {
          i++;
          return arr;
        }
        fail('expected , or ]', ptr);
      }
    }
    if (ch === '"') return string(ptr);
    for (const [word, v] of [['true', true], ['false', false], ['null', null]]) {
      if (text.startsWith(word, i)) {
        i += word.length;
        return v;
      }
    }
    NUMBER.lastIndex = i;
    const m = NUMBER.exec(text);
    if (!m) fail('unexpected token', ptr);
    i += m[0].length;
    const n = Number(m[0]);
    if (!Number.isFinite(n)) fail('number outside the IEEE 754 double range', ptr);
    if (m[1] === undefined && m[2] === undefined && BigInt(m[0]) !== BigInt(n)) {
      fail('integer literal not exactly representable as an IEEE 754 double', ptr);
    }
    return n;
  }

  const result = value('');
  ws();
  if (i !== text.length) fail('trailing characters', '');
  return result;
}

// ------------------------------------------------------------------ UMP integrity

const b32 = (bytes) => base32.encode(bytes).replace(/=+$/, '').toLowerCase();
const hashOfBytes = (bytes) => `blake3:${b32(blake3(bytes))}`;
const hex = (bytes) => Buffer.from(bytes).toString('hex');

function withoutIntegrity(record) {
  const out = {};
  for (const [k, v] of Object.entries(record)) if (k !== 'integrity') out[k] = v;
  return out;
}

const contentHash = (record) => hashOfBytes(utf8.encode(canonicalize(withoutIntegrity(record))));

function publicKeyFromDid(did) {
  if (typeof did !== 'string' || !did.startsWith('did:key:z')) throw new Error('not a base58btc did:key');
  const raw = base58.decode(did.slice('did:key:z'.length));
  if (raw.length !== 34 || raw[0] !== 0xed || raw[1] !== 0x01) {
    throw new Error('not an Ed25519 did:key (multicodec 0xed 0x01 + 32 bytes)');
  }
  return raw.slice(2);
}

const didFromPublicKey = (pk) => `did:key:z${base58.encode(Uint8Array.from([0xed, 0x01, ...pk]))}`;

function ed25519Verify(publicKey, message, signature) {
  const key = createPublicKey({
    key: { kty: 'OKP', crv: 'Ed25519', x: Buffer.from(publicKey).toString('base64url') },
    format: 'jwk',
  });
  return verify(null, Buffer.from(message), key, Buffer.from(signature));
}

// The checks in the order the reference implementation states them: the hash, then the key, then
// the signature, then whether the signer is the owner. The first failure names its member.
function checkIntegrity(record) {
  const out = {};
  const integ = record.integrity;
  const bad = (pointer, reason) => ({ ...out, verdict: 'signature_invalid', pointer, reason });
  out.content_hash = contentHash(record);
  const blank = withoutIntegrity(record);
  blank.id = '';
  out.content_addressed_id = record.id === `urn:ump:${contentHash(blank).slice('blake3:'.length)}`;
  const ch = integ.content_hash;
  if (typeof ch !== 'string' || !ch.startsWith('blake3:')) return bad('/integrity/content_hash', 'malformed content_hash');
  if (ch !== out.content_hash) return bad('/integrity/content_hash', 'content_hash does not match the record');
  let publicKey;
  try {
    publicKey = publicKeyFromDid(integ.signer);
  } catch (e) {
    return bad('/integrity/signer', `signer: ${e.message}`);
  }
  out.signer_public_key = hex(publicKey);
  out.signer_reencoded = didFromPublicKey(publicKey);
  const sig = integ.signature;
  if (typeof sig !== 'string' || !sig.startsWith('ed25519:')) return bad('/integrity/signature', 'malformed signature');
  let raw;
  try {
    raw = base64.decode(sig.slice('ed25519:'.length));
  } catch (e) {
    return bad('/integrity/signature', `signature is not padded standard base64: ${e.message}`);
  }
  if (raw.length !== 64) return bad('/integrity/signature', `signature has ${raw.length} bytes, not 64`);
  if (!ed25519Verify(publicKey, blake3(utf8.encode(ch)), raw)) {
    return bad('/integrity/signature', 'Ed25519 verification failed');
  }
  if (integ.signer !== record.scope?.owner) return bad('/integrity/signer', 'signer is not scope.owner');
  return { ...out, verdict: 'valid', signer: integ.signer };
}

// ------------------------------------------------------------------ test keys

function testKeyDid(name) {
  const seed = createHash('sha256').update(`memconform-test-key:${name}`, 'utf8').digest();
  const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
  const priv = createPrivateKey({ key: pkcs8, format: 'der', type: 'pkcs8' });
  const jwk = createPublicKey(priv).export({ format: 'jwk' });
  return didFromPublicKey(Buffer.from(jwk.x, 'base64url'));
}

// ------------------------------------------------------------------ memoturn ids

// serde_json's BTreeMap (the engine) and Python order keys by code point; Array.prototype.sort
// compares UTF-16 code units, which puts U+1F600 (D83D DE00) before U+FF61. Compare code points.
function byCodePoint(a, b) {
  const x = Array.from(a, (c) => c.codePointAt(0));
  const y = Array.from(b, (c) => c.codePointAt(0));
  for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
  return x.length - y.length;
}

// The escaping the engine's writer uses: '"', '\\', the C0 controls (short forms where JSON has
// them, else lowercase \u00xx); everything else, U+007F and U+2028/U+2029 included, is raw.
function expectedEscape(ch) {
  const short = { '"': '\\"', '\\': '\\\\', '\b': '\\b', '\f': '\\f', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
  if (ch in short) return short[ch];
  const c = ch.charCodeAt(0);
  return c < 0x20 ? `\\u${c.toString(16).padStart(4, '0')}` : ch;
}

// JSON.stringify's string escaping is what this writer relies on; every BMP code unit outside the
// surrogates is compared with the rule above (lone surrogates are outside the vectors' domain).
function escapingMismatches() {
  const out = [];
  for (let c = 0; c <= 0xffff; c++) {
    if (c >= 0xd800 && c <= 0xdfff) continue;
    const ch = String.fromCharCode(c);
    if (JSON.stringify(ch) !== `"${expectedEscape(ch)}"`) out.push(`U+${c.toString(16).padStart(4, '0')}`);
  }
  return out;
}

class OutsideDomain extends Error {}

function canonicalJson(v) {
  if (v === null) return 'null';
  if (v === true) return 'true';
  if (v === false) return 'false';
  if (typeof v === 'number') {
    // floats (and integers past 2^53) print differently per language: no vector may hold one
    if (!Number.isInteger(v) || Math.abs(v) > 2 ** 53) throw new OutsideDomain(`number ${v} is not an integer within 2^53`);
    return Object.is(v, -0) ? '0' : String(v);
  }
  if (typeof v === 'string') {
    if (hasLoneSurrogate(v)) throw new OutsideDomain('lone surrogate');
    return JSON.stringify(v);
  }
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (typeof v === 'object') {
    const keys = Object.keys(v).sort(byCodePoint);
    return `{${keys.map((k) => `${canonicalJson(k)}:${canonicalJson(v[k])}`).join(',')}}`;
  }
  throw new OutsideDomain(`not a JSON value: ${typeof v}`);
}

function memoturnId(input) {
  try {
    const canonical = canonicalJson(input.content);
    const hashed = `${input.type}\u0000${input.topic_key ?? ''}\u0000${canonical}`;
    const digest = sha256(utf8.encode(hashed));
    return { verdict: 'computed', id: `mem_${hex(digest.slice(0, 16))}`, sha256: hex(digest), canonical, hashed };
  } catch (e) {
    return { verdict: 'outside-domain', reason: e.message };
  }
}

// ------------------------------------------------------------------ main

function caseFiles(root) {
  const out = [];
  const walk = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (name.endsWith('.json')) out.push(p);
    }
  };
  for (const spec of ['ump', 'memoturn']) walk(join(root, spec));
  return out;
}

const root = process.argv[2];
if (!root) {
  console.error('usage: node crosscheck.mjs <vectors folder>');
  process.exit(2);
}

const versionOf = (pkg) =>
  JSON.parse(readFileSync(join(here, 'node_modules', ...pkg.split('/'), 'package.json'), 'utf8')).version;
const report = {
  node: process.version,
  libraries: Object.fromEntries(['canonicalize', '@noble/hashes', '@scure/base'].map((p) => [p, versionOf(p)])),
  memoturn_escaping: { mismatches: escapingMismatches() },
  test_keys: Object.fromEntries(['owner-a', 'owner-b', 'mallory'].map((n) => [n, testKeyDid(n)])),
  files: [],
  cases: {},
};

for (const path of caseFiles(root)) {
  const doc = JSON.parse(readFileSync(path, 'utf8'));
  if (!Array.isArray(doc.cases)) continue; // a source file, not a case file
  report.files.push(relative(root, path).split(sep).join('/'));
  for (const c of doc.cases) {
    if (c.kind === 'canonical') {
      try {
        const canonical = canonicalize(parseIJson(c.input_json));
        report.cases[c.id] = { verdict: 'valid', canonical, content_hash: hashOfBytes(utf8.encode(canonical)) };
      } catch (e) {
        const r = { verdict: 'invalid', reason: e.message };
        if (e instanceof NotIJson && e.pointer !== undefined) r.pointer = e.pointer;
        report.cases[c.id] = r;
      }
    } else if (c.kind === 'record' && c.input && typeof c.input === 'object' && 'integrity' in c.input) {
      report.cases[c.id] = checkIntegrity(c.input);
    } else if (c.kind === 'markdown' && c.expect?.record && 'integrity' in c.expect.record) {
      report.cases[c.id] = checkIntegrity(c.expect.record);
    } else if (c.kind === 'memoturn-id') {
      report.cases[c.id] = memoturnId(c.input);
    }
  }
}

process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
