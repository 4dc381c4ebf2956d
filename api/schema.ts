import type { JSONSchemaProps } from '../crd/apiextensions.ts';
import {
  CONTENT_MAX_LENGTH,
  DEFAULT_REPLICAS,
  DEFAULT_TIER,
  HOSTNAME_MAX_LENGTH,
  REPLICAS_MAX,
  REPLICAS_MIN,
  type ServedVersion,
  STORAGE_VERSION,
  TIERS,
} from './constants.ts';
import { type RuleTable, SITE_RULES, schemaNodeAt, schemaWithRules } from './rules.ts';

export interface SchemaOptions {
  /** Leave out every `x-kubernetes-validations` rule (the "webhook-only" variant). */
  withoutCelRules?: boolean;
  /** The rules the schema carries on their fields. Default: SITE_RULES. */
  rules?: RuleTable;
}

/** metav1.Condition as controller-gen renders it for CRDs. */
const conditionSchema: JSONSchemaProps = {
  type: 'object',
  description: 'Condition contains details for one aspect of the current state of this API Resource.',
  required: ['lastTransitionTime', 'message', 'reason', 'status', 'type'],
  properties: {
    lastTransitionTime: {
      type: 'string',
      format: 'date-time',
      description: 'lastTransitionTime is the last time the condition transitioned from one status to another.',
    },
    message: {
      type: 'string',
      maxLength: 32768,
      description: 'message is a human readable message indicating details about the transition.',
    },
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'observedGeneration represents the .metadata.generation that the condition was set based upon.',
    },
    reason: {
      type: 'string',
      maxLength: 1024,
      minLength: 1,
      pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$',
      description:
        "reason contains a programmatic identifier indicating the reason for the condition's last transition.",
    },
    status: {
      type: 'string',
      enum: ['True', 'False', 'Unknown'],
      description: 'status of the condition, one of True, False, Unknown.',
    },
    type: {
      type: 'string',
      maxLength: 316,
      pattern:
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      description: 'type of condition in CamelCase or in foo.example.com/CamelCase.',
    },
  },
};

const statusSchema: JSONSchemaProps = {
  type: 'object',
  description: 'The observed state of the site, written by the controller.',
  properties: {
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      description: 'The metadata.generation the controller last acted on.',
    },
    readyReplicas: {
      type: 'integer',
      format: 'int32',
      description: 'Pods of the site that are Ready.',
    },
    url: {
      type: 'string',
      description: 'Where the site is served.',
    },
    conditions: {
      type: 'array',
      description:
        'Ready: the site serves this generation. Progressing: its rollout is under way (False once done or stuck). Degraded: something stops it from converging (reason and message say what).',
      items: conditionSchema,
      'x-kubernetes-list-type': 'map',
      'x-kubernetes-list-map-keys': ['type'],
    },
  },
};

function specSchema(version: ServedVersion): JSONSchemaProps {
  const properties: Record<string, JSONSchemaProps> = {
    content: {
      type: 'string',
      minLength: 1,
      maxLength: CONTENT_MAX_LENGTH,
      description: 'The index.html the site serves.',
    },
    replicas: {
      type: 'integer',
      format: 'int32',
      minimum: REPLICAS_MIN,
      maximum: REPLICAS_MAX,
      default: DEFAULT_REPLICAS,
      description: 'How many web server pods serve the site.',
    },
    tier: {
      type: 'string',
      enum: [...TIERS],
      default: DEFAULT_TIER,
      description: 'dev or prod; prod needs at least 2 replicas. Immutable.',
    },
  };
  if (version === 'v1') {
    properties.hostname = {
      type: 'string',
      maxLength: HOSTNAME_MAX_LENGTH,
      description:
        'DNS name of the external record. Defaults to <name>.<namespace>.<base domain> when the webhook runs.',
    };
  }
  return {
    type: 'object',
    description: 'The desired state of the site.',
    required: ['content'],
    properties,
  };
}

/** The rules on their fields; every rule's field exists in the storage version, which has them all. */
function withSiteRules(schema: JSONSchemaProps, version: ServedVersion, rules: RuleTable): JSONSchemaProps {
  if (version === STORAGE_VERSION) {
    const lost = rules.filter((rule) => schemaNodeAt(schema, rule.path) === undefined);
    if (lost.length > 0) throw new Error(`no field ${lost.map((r) => r.path.join('.')).join(', ')} for a rule`);
  }
  return schemaWithRules(schema, rules);
}

/** The structural OpenAPI v3 schema of one StaticSite version. */
export function staticSiteSchema(version: ServedVersion, options: SchemaOptions = {}): JSONSchemaProps {
  const schema = plainSchema(version);
  return options.withoutCelRules ? schema : withSiteRules(schema, version, options.rules ?? SITE_RULES);
}

function plainSchema(version: ServedVersion): JSONSchemaProps {
  return {
    type: 'object',
    description: 'StaticSite serves one HTML page through a Deployment, a Service and an external DNS record.',
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string', description: 'APIVersion defines the versioned schema of this object.' },
      kind: { type: 'string', description: 'Kind is a string value representing the REST resource.' },
      metadata: { type: 'object' },
      spec: specSchema(version),
      status: statusSchema,
    },
  };
}
