// Which broker address the agent uses, of the two the pairing answer handed it (`url`, MQTT
// over TCP or TLS, and `wsUrl`, MQTT over WebSocket). A TLS one (mqtts://, wss://) is
// preferred. An agent whose cloud is https never falls back to a plaintext one (mqtt://,
// ws://): the device secret and everything sent to the screen would cross the network
// unencrypted, so it refuses and says why, unless started with --allow-insecure-mqtt (labs).
import type { MqttLinkInfo } from '../pairing/CloudClient.js'

export type BrokerChoice = { url: string; plaintext: boolean } | { refused: string; offered: string[] }

const isTls = (url: string): boolean => /^(mqtts|wss):/i.test(url)

export function chooseBrokerUrl(link: Pick<MqttLinkInfo, 'url' | 'wsUrl'>, cloudUrl: string, allowInsecure: boolean): BrokerChoice {
  const offered = [link.url, link.wsUrl].filter((u): u is string => typeof u === 'string' && u !== '')
  const secure = offered.find(isTls)
  if (secure) return { url: secure, plaintext: false }
  const first = offered[0]
  if (first === undefined) return { refused: 'the stored credential names no broker address; pair this screen again', offered }
  if (!/^https:/i.test(cloudUrl) || allowInsecure) return { url: first, plaintext: true }
  return {
    refused:
      `refusing the plaintext broker address ${offered.join(' / ')}: the cloud ${cloudUrl} is https, and over mqtt:// or ws:// the device secret ` +
      'and everything sent to this screen would cross the network unencrypted. The cloud must hand out mqtts:// or wss:// (its operator sets ' +
      'SVC_PUBLIC_URL to the https address, or SVC_MQTT_TLS_CERT and SVC_MQTT_TLS_KEY, or SVC_MQTT_PUBLIC_URL; then pair this screen again); ' +
      'in a lab, start the agent with --allow-insecure-mqtt',
    offered,
  }
}
