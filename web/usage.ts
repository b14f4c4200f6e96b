// The client's limits and today's use of them (GET /v1/usage): the batch list's usage line and the new batch's estimate.
import { type Api, isNotFound, type Usage } from './api';
import { capabilities } from './capabilities';

/** Today's use of the client's limits (GET /v1/usage), when the API serves it; null otherwise. */
export async function loadUsage(api: Api): Promise<Usage | null> {
  if (!(await capabilities()).serves('GET', '/v1/usage')) return null;
  try {
    return await api.get<Usage>('/v1/usage');
  } catch (error) {
    if (isNotFound(error)) return null;
    throw error;
  }
}
