// What a Lambda bundle gets in place of @aws-sdk/credential-provider-node (scripts/bundle.ts). Lambda hands every
// function its role's credentials in AWS_ACCESS_KEY_ID / AWS_SECRET_ACCESS_KEY / AWS_SESSION_TOKEN, so the SDK's default
// chain always stops at its first link, fromEnv; the rest of the chain (profiles, SSO, process, web identity, ECS,
// IMDS and the STS/SSO clients they load) is code a function would parse at every cold start and never run.
// Everything not bundled (the local stack, tests, client:create) keeps the SDK's full chain.
import { type FromEnvInit, fromEnv } from '@aws-sdk/credential-provider-env';

export const defaultProvider = (init: FromEnvInit = {}): ReturnType<typeof fromEnv> => fromEnv(init);
