/**
 * `@termgate/transport-http/adapters`: the technology behind the transport's
 * ports (authorizers), for the composition root and tests only. Named
 * exports only.
 */
export {};
