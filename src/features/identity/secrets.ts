import { createHash, randomInt } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const randomString = (n: number) =>
  Array.from({ length: n }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');

/**
 * A secret key is `<key_id>_<secret>`: the key id (`ls` + 10 characters) is public and
 * addresses the token; only a SHA-256 of the whole key is stored. High-entropy random
 * keys need no slow hash (unlike passwords).
 */
export function newSecretKey(): { keyId: string; secretKey: string } {
  const keyId = `ls${randomString(10)}`;
  return { keyId, secretKey: `${keyId}_${randomString(32)}` };
}

export const hashSecret = (secretKey: string) => createHash('sha256').update(secretKey).digest('hex');

/** The key id of a full key, or the argument itself when it already is a key id. */
export const keyIdOf = (keyOrId: string) => keyOrId.split('_', 1)[0] ?? keyOrId;

export const maskKey = (keyId: string) => `${keyId}…`;
