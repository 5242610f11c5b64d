// Entry point of the dev server. Do not edit: change config.json instead.
import config from "./config.json" with { type: "json" };
console.log(`dev server on ${config.host}:${config.port}`);
