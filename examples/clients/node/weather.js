// The weather agent the Agents SDK tests run: one get_weather tool that
// records the cities it was called for.

import { Agent, tool } from '@openai/agents';
import { z } from 'zod';

// weatherAgent is an agent on model (with modelSettings) whose get_weather
// tool records the cities it was called for in calls.
export function weatherAgent(model, modelSettings = {}) {
  const calls = [];
  const getWeather = tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: z.object({ city: z.string() }),
    execute: async ({ city }) => {
      calls.push(city);
      return `It is 21 degrees and sunny in ${city}.`;
    },
  });
  return { agent: new Agent({ name: 'Weather', instructions: 'Use the tools.', model, modelSettings, tools: [getWeather] }), calls };
}
