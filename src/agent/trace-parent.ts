import { BaseCallbackHandler, type CallbackHandlerMethods } from "@langchain/core/callbacks/base";
import type { CallbackManager, Callbacks } from "@langchain/core/callbacks/manager";

/**
 * Callbacks for a model or tool call inside a turn. An explicit `callbacks` list replaces the
 * ones a runnable inherits, so a traced turn (src/app/tracing.ts) hands its run's callback
 * manager down and each call adds its own handlers to a copy of it: the call's runs then nest
 * under the turn's run instead of starting traces of their own.
 */
export function withParentCallbacks(
  parent: CallbackManager | undefined,
  handlers: Array<BaseCallbackHandler | CallbackHandlerMethods>,
): CallbackManager | Array<BaseCallbackHandler | CallbackHandlerMethods> {
  if (!parent) return handlers;
  return parent.copy(handlers.map((h) => (h instanceof BaseCallbackHandler ? h : BaseCallbackHandler.fromMethods(h))));
}

/** The config with `handlers` added to the callbacks it has (a manager, as a graph node gets, a list, or none). */
export function withCallbacks<C extends { callbacks?: Callbacks }>(
  config: C,
  handlers: Array<BaseCallbackHandler | CallbackHandlerMethods>,
): C {
  const { callbacks } = config;
  if (callbacks && !Array.isArray(callbacks)) return { ...config, callbacks: withParentCallbacks(callbacks, handlers) };
  return { ...config, callbacks: [...(callbacks ?? []), ...handlers] };
}

/**
 * A handler of the model's tokens only. It rides along in the run's callbacks, which every
 * runnable of a step hands its start and end: told to ignore those, it costs them nothing.
 */
export function tokenHandler(onToken: (text: string) => void): BaseCallbackHandler {
  const handler = BaseCallbackHandler.fromMethods({ handleLLMNewToken: (text: string) => onToken(text) });
  handler.ignoreChain = true;
  handler.ignoreAgent = true;
  handler.ignoreRetriever = true;
  handler.ignoreCustomEvent = true;
  return handler;
}
