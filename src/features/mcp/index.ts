/**
 * MCP: the logs as tools for the user's own assistant (docs/mcp.md), at `/mcp` on the
 * server's port. Stateless (ADR 0027): each message is authenticated and answered on its
 * own, through the services the REST routes use.
 */
import { VERSION } from '../../version.js';
import { component } from '../component.js';
import { mcpDisabledRoutes, mcpRoutes, oauthDiscoveryRoutes } from './mcp-routes.js';
import { McpService } from './mcp-service.js';

declare module '../component.js' {
  interface Services {
    mcp: McpService;
  }
}

export const mcp = component({
  name: 'mcp',
  build({ config, log }, s) {
    const service = new McpService({
      tools: { queries: s.queries, events: s.events, fields: s.fields, streams: s.streams },
      runner: s.runner,
      audit: s.audit,
      log,
      version: VERSION,
      toolTimeoutMs: config.mcpToolTimeoutSeconds * 1000,
    });
    const allowedOrigins = new Set(
      config.mcpAllowedOrigins
        .split(',')
        .map((o) => o.trim())
        .filter((o) => o !== ''),
    );
    return {
      provides: { mcp: service },
      async routes(app) {
        await app.register(oauthDiscoveryRoutes);
        await app.register(
          config.mcpEnabled
            ? (scope) => mcpRoutes(scope, { mcp: service, tokens: s.tokens, allowedOrigins })
            : mcpDisabledRoutes,
        );
      },
    };
  },
});
