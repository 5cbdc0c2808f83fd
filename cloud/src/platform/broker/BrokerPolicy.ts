// The hooks a device policy gives the embedded broker (who may connect, publish, subscribe),
// in their own file so the policy pieces and the broker do not import each other.
import type { AedesOptions } from 'aedes'

export type BrokerPolicy = Pick<AedesOptions, 'preConnect' | 'authenticate' | 'authorizePublish' | 'authorizeSubscribe' | 'authorizeForward' | 'published'>
