/** Tasks: what users (and triggers) make of what they find. */

import { hiddenEventIds } from '../domain/events/hidden-events.js';
import { TaskSchema } from '../domain/tasks/task-schema.js';
import { TasksService } from '../domain/tasks/tasks-service.js';
import { taskRoutes } from '../http/routes/tasks.js';
import { TasksRepository } from '../metadata/tasks-repository.js';
import { UsersRepository } from '../metadata/users-repository.js';
import { component } from './component.js';

declare module './component.js' {
  interface Services {
    tasks: TasksService;
  }
}

export const tasks = component({
  name: 'tasks',
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
