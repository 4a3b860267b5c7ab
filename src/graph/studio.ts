import { createBuilder, createRuntime } from "./graph.js";
import { settingsFromEnvironment } from "../settings.js";

/** The uncompiled builder for the settings in the environment. */
export const builder = createBuilder(createRuntime(settingsFromEnvironment()));

/** The compiled graph LangGraph Studio loads; the dev server supplies its own checkpointer. */
export const graph = builder.compile();
