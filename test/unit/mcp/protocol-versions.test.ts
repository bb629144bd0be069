/**
 * The MCP SDK is loaded with the first message, not at start-up (mcp-service.ts): the
 * revisions the server names before that must still lead with the SDK's newest.
 */
import { LATEST_PROTOCOL_VERSION } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { PROTOCOL_VERSIONS } from '../../../src/features/mcp/mcp-service.js';

describe('MCP protocol revisions', () => {
  it("lead with the SDK's newest", () => {
    expect(PROTOCOL_VERSIONS[0]).toBe(LATEST_PROTOCOL_VERSION);
  });
});
