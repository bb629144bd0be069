import type { Config } from '../config/config.js';
import type { MetadataDb } from '../metadata/database.js';
import { TokensRepository } from '../metadata/tokens-repository.js';
import { UsersRepository } from '../metadata/users-repository.js';
import { TokensService } from './tokens/tokens-service.js';
import { UsersService } from './users/users-service.js';

/** Every service the HTTP layer and the CLI use, wired once. */
export interface Services {
  tokens: TokensService;
  users: UsersService;
}

export function createServices(meta: MetadataDb, config: Config): Services {
  const usersRepo = new UsersRepository(meta.db);
  const tokens = new TokensService(new TokensRepository(meta.db), usersRepo, config.tokenCacheSeconds * 1000);
  const users = new UsersService(usersRepo, tokens);
  return { tokens, users };
}
