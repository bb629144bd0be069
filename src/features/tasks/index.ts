/** Tasks: what users (and triggers) make of what they find. */

import { component } from '../component.js';
import { UsersRepository } from '../identity/index.js';
import { hiddenEventIds } from './hidden-events.js';
import { TaskSchema } from './task-schema.js';
import { TasksRepository } from './tasks-repository.js';
import { taskRoutes } from './tasks-routes.js';
import { TasksService } from './tasks-service.js';
import { tasksMigration } from './tasks-table.js';

declare module '../component.js' {
  interface Services {
    tasks: TasksService;
  }
}

export const tasks = component({
  name: 'tasks',
  migrations: { '0003-tasks': tasksMigration },
  build({ meta, events }, { readScopes }) {
    const tasks = new TasksService(
      new TasksRepository(meta.db),
      new UsersRepository(meta.db),
      async (who, evIds) => hiddenEventIds(events, await readScopes.of(who), evIds),
    );
    return {
      provides: { tasks },
      schemas: [TaskSchema],
      routes: async (app) => void (await app.register(taskRoutes, { tasks })),
    };
  },
});
