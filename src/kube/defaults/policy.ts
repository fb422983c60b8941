/**
 * The policy/v1 kinds' defaults: none. kubernetes pkg/apis/policy/v1 has no defaults.go and no
 * zz_generated.defaults.go, and k8s.io/api policy/v1/types.go has no `+default` marker, so a
 * PodDisruptionBudget reaches admission as it was sent (an unset unhealthyPodEvictionPolicy means
 * IfHealthyBudget, but stays unset).
 */
import type { Place } from "./place.ts";

/** The policy/v1 kinds with defaults, by kind. */
export const POLICY_V1: Readonly<Record<string, (object: Place) => void>> = {};
