/** The audit annotation the API server sets for validations whose binding says `Audit`. */
export const VALIDATION_FAILURE_ANNOTATION = "validation.policy.admission.k8s.io/validation_failure";
