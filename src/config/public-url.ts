import type { Config } from './config.js';

/**
 * Where clients reach the server, for links in answers and notifications: `publicUrl`,
 * else the address it listens on (a wildcard address as `localhost`). Never taken from a
 * request's Host header. The port is the configured one until the server listens (port 0
 * picks one).
 */
export class PublicUrl {
  private port: number;

  constructor(private readonly config: Pick<Config, 'publicUrl' | 'host' | 'port'>) {
    this.port = config.port;
  }

  /** The server listens on `port`. */
  listening(port: number): void {
    this.port = port;
  }

  get(): string {
    if (this.config.publicUrl) return this.config.publicUrl.replace(/\/+$/, '');
    const { host } = this.config;
    const name = host === '0.0.0.0' || host === '::' ? 'localhost' : host;
    return `http://${name.includes(':') ? `[${name}]` : name}:${this.port}`;
  }
}
