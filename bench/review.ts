/**
 * The admission review every in-process and HTTP benchmark sends: one realistic ~4.5 KB Pod CREATE,
 * allowed by every benchmark policy set, and a variant that the Pod Security rules must deny (the
 * correctness gates check both before anything is timed).
 */

/** A Deployment-made Pod as the API server sends it after defaulting: 3 containers, probes, volumes. */
export function podReview(): Record<string, unknown> {
  const securityContext = {
    allowPrivilegeEscalation: false,
    readOnlyRootFilesystem: true,
    runAsNonRoot: true,
    capabilities: { drop: ["ALL"] },
  };
  const container = (name: string, image: string, port: number) => ({
    name,
    image,
    imagePullPolicy: "IfNotPresent",
    ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
    env: [
      { name: "APP_ENV", value: "production" },
      { name: "POD_NAME", valueFrom: { fieldRef: { apiVersion: "v1", fieldPath: "metadata.name" } } },
    ],
    resources: { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } },
    livenessProbe: {
      httpGet: { path: "/healthz", port, scheme: "HTTP" },
      periodSeconds: 10,
      failureThreshold: 3,
    },
    readinessProbe: {
      httpGet: { path: "/readyz", port, scheme: "HTTP" },
      periodSeconds: 5,
      failureThreshold: 3,
    },
    volumeMounts: [
      { name: "config", mountPath: "/etc/app", readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
      {
        name: "kube-api-access-7x2kq",
        mountPath: "/var/run/secrets/kubernetes.io/serviceaccount",
        readOnly: true,
      },
    ],
    securityContext,
  });
  const pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name: "checkout-7d9f8b6c5d-x2x4q",
      generateName: "checkout-7d9f8b6c5d-",
      namespace: "team-a",
      labels: {
        app: "checkout",
        "app.kubernetes.io/name": "checkout",
        "app.kubernetes.io/version": "2.14.1",
        "pod-template-hash": "7d9f8b6c5d",
        team: "payments",
      },
      annotations: { "kubectl.kubernetes.io/restartedAt": "2024-05-01T10:00:00Z" },
      ownerReferences: [
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "checkout-7d9f8b6c5d",
          uid: "5b1c0f1e-8a3b-4c1d-9e2f-0a1b2c3d4e5f",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      serviceAccountName: "checkout",
      automountServiceAccountToken: true,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: 10001,
        fsGroup: 10001,
        seccompProfile: { type: "RuntimeDefault" },
      },
      initContainers: [
        {
          name: "migrate",
          image: "registry.example.com/payments/checkout-migrate:2.14.1",
          imagePullPolicy: "IfNotPresent",
          args: ["migrate", "--wait"],
          resources: { limits: { cpu: "200m", memory: "128Mi" } },
          securityContext,
        },
      ],
      containers: [
        container("checkout", "registry.example.com/payments/checkout:2.14.1", 8080),
        container("envoy", "registry.example.com/mesh/envoy:1.30.2", 15001),
      ],
      volumes: [
        { name: "config", configMap: { name: "checkout-config", defaultMode: 420 } },
        { name: "tmp", emptyDir: { sizeLimit: "64Mi" } },
        {
          name: "kube-api-access-7x2kq",
          projected: {
            defaultMode: 420,
            sources: [
              { serviceAccountToken: { expirationSeconds: 3607, path: "token" } },
              { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
              {
                downwardAPI: {
                  items: [
                    { path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } },
                  ],
                },
              },
            ],
          },
        },
      ],
      restartPolicy: "Always",
      terminationGracePeriodSeconds: 30,
      dnsPolicy: "ClusterFirst",
      schedulerName: "default-scheduler",
      enableServiceLinks: true,
      preemptionPolicy: "PreemptLowerPriority",
      priority: 0,
      tolerations: [
        {
          key: "node.kubernetes.io/not-ready",
          operator: "Exists",
          effect: "NoExecute",
          tolerationSeconds: 300,
        },
      ],
    },
  };
  return {
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: {
      uid: "0f5c2d4e-bench-4a8b-9c1d-2e3f4a5b6c7d",
      kind: { group: "", version: "v1", kind: "Pod" },
      resource: { group: "", version: "v1", resource: "pods" },
      requestKind: { group: "", version: "v1", kind: "Pod" },
      requestResource: { group: "", version: "v1", resource: "pods" },
      name: pod.metadata.name,
      namespace: "team-a",
      operation: "CREATE",
      userInfo: {
        username: "system:serviceaccount:kube-system:replicaset-controller",
        uid: "a1b2c3d4-0000-4000-8000-000000000001",
        groups: ["system:serviceaccounts", "system:serviceaccounts:kube-system", "system:authenticated"],
      },
      object: pod,
      oldObject: null,
      dryRun: false,
      options: { apiVersion: "meta.k8s.io/v1", kind: "CreateOptions" },
    },
  };
}

/** The same review with a Pod that breaks several Pod Security rules (privileged, host network, root). */
export function badPodReview(): Record<string, unknown> {
  const review = podReview() as { request: { uid: string; object: PodLike } };
  review.request.uid = "0f5c2d4e-bench-4a8b-9c1d-bad000000000";
  const pod = review.request.object;
  pod.spec.hostNetwork = true;
  pod.spec.securityContext.runAsUser = 0;
  for (const c of pod.spec.containers) {
    c.image = c.image.replace(/:[^:/]+$/, ":latest");
    c.securityContext = { ...c.securityContext, privileged: true, allowPrivilegeEscalation: true };
  }
  return review;
}

/** The parts of the benchmark Pod that badPodReview edits. */
interface PodLike {
  spec: {
    hostNetwork?: boolean;
    securityContext: Record<string, unknown>;
    containers: { image: string; securityContext: Record<string, unknown> }[];
  };
}
