#!/usr/bin/python3
"""k8s_shape.py - the Kubernetes manifests of container/k8s, checked as far
as this machine allows (no API server, no kubelet, no CNI here).

  k8s_shape.py check FILE...
      Every document of every FILE against the Kubernetes API models of
      Debian 12's python3-kubernetes (22.6.0: the Kubernetes 1.22 API):
      every key a field of its type (spelling and nesting), every value of
      the field's type, every required field present (the models' own
      validation), apiVersion/kind a model. A field newer than those
      models is refused unless it is listed in NEWER below with the
      release that added it. Prints "ok FILE: KIND/NAME ..." per document,
      or one line per fault and exits 1.

  k8s_shape.py daemonset FILE
      The DaemonSet's own rules for a node guard in tenant mode (what the
      model check cannot say): see rules() below. Exit 1 naming each
      broken rule.

  k8s_shape.py docker-args FILE
      The guard container of the DaemonSet as `docker run` arguments, one
      a line: -e NAME=VALUE for its env, --user, --cap-drop/--cap-add,
      --read-only, --security-opt no-new-privileges:true. docker_test.sh
      runs the Docker proof's guard with exactly these, so the container
      the manifest describes is the one the proof ran.

kubectl (Debian's, 1.32) is on this machine too, but it needs an API
server even for --dry-run=client (its OpenAPI download and discovery):
nothing of it is used here.
"""
import re
import sys

import yaml

K = None  # kubernetes.client, imported by `check` only (a second of start-up)


def models():
    global K
    try:
        import kubernetes.client
    except ImportError:  # said, never skipped
        sys.exit("k8s_shape.py: python3-kubernetes is not installed (apt-get install "
                 "python3-kubernetes): the model check has no schema")
    K = kubernetes.client

# Fields newer than the 1.22 models: (model, field) -> the release that
# added it. Anything else unknown is a fault.
NEWER = {
    ("V1Container", "restartPolicy"): "1.29 (native sidecar: an init container with restartPolicy: Always)",
}

SEEN_NEWER = set()  # the NEWER fields met, said with the document

PRIMS = {"str": str, "int": int, "bool": bool, "float": (int, float)}


def model_of(api_version, kind):
    """apiVersion apps/v1, kind DaemonSet -> K.V1DaemonSet."""
    ver = api_version.split("/")[-1]
    name = ver[0].upper() + ver[1:] + kind
    return getattr(K, name, None)


def walk(typ, val, path, faults):
    """VAL against the model type string TYP; returns the value built (a
    model for a model type) or None after a fault."""
    m = re.fullmatch(r"list\[(.+)\]", typ)
    if m:
        if not isinstance(val, list):
            faults.append("%s: expected a list, got %s" % (path, type(val).__name__))
            return None
        return [walk(m.group(1), v, "%s[%d]" % (path, i), faults) for i, v in enumerate(val)]
    m = re.fullmatch(r"dict\(str, (.+)\)", typ)
    if m:
        if not isinstance(val, dict):
            faults.append("%s: expected a map, got %s" % (path, type(val).__name__))
            return None
        return {k: walk(m.group(1), v, "%s.%s" % (path, k), faults) for k, v in val.items()}
    if typ == "object":
        return val
    if typ in PRIMS:
        ok = isinstance(val, PRIMS[typ]) and not (typ != "bool" and isinstance(val, bool))
        if not ok:
            faults.append("%s: expected %s, got %r" % (path, typ, val))
            return None
        return val
    cls = getattr(K, typ, None)
    if cls is None:
        faults.append("%s: no model %s" % (path, typ))
        return None
    if not isinstance(val, dict):
        faults.append("%s: expected a %s (a map), got %r" % (path, typ, val))
        return None
    by_json = {j: a for a, j in cls.attribute_map.items()}
    kw = {}
    for k, v in val.items():
        if k not in by_json:
            if (typ, k) in NEWER:
                SEEN_NEWER.add("%s.%s (%s)" % (typ, k, NEWER[(typ, k)]))
                continue
            faults.append("%s.%s: not a field of %s (known: %s)" % (
                path, k, typ, ", ".join(sorted(by_json))))
            continue
        a = by_json[k]
        kw[a] = walk(cls.openapi_types[a], v, "%s.%s" % (path, k), faults)
    try:
        return cls(**kw)
    except (ValueError, TypeError) as e:
        faults.append("%s: %s: %s" % (path, typ, e))
        return None


def load(path):
    with open(path) as f:
        return [d for d in yaml.safe_load_all(f) if d is not None]


def check(paths):
    models()
    faults = []
    for p in paths:
        for i, d in enumerate(load(p)):
            where = "%s#%d" % (p, i)
            if not isinstance(d, dict) or "apiVersion" not in d or "kind" not in d:
                faults.append("%s: no apiVersion/kind" % where)
                continue
            cls = model_of(d["apiVersion"], d["kind"])
            if cls is None:
                faults.append("%s: no model for %s %s" % (where, d["apiVersion"], d["kind"]))
                continue
            n = len(faults)
            SEEN_NEWER.clear()
            walk(cls.__name__, d, "%s:%s" % (where, d["kind"]), faults)
            if len(faults) == n:
                newer = sorted(SEEN_NEWER)
                print("ok %s: %s/%s against %s%s" % (
                    p, d["kind"], d.get("metadata", {}).get("name", "?"), cls.__name__,
                    "; newer than the models, not checked: " + ", ".join(newer) if newer else ""))
    for f in faults:
        print("fault " + f)
    return 1 if faults else 0


def daemonset(path):
    docs = load(path)
    ds = [d for d in docs if d.get("kind") == "DaemonSet"]
    if len(ds) != 1:
        print("fault: want exactly one DaemonSet, found %d" % len(ds))
        return None, None
    pod = ds[0]["spec"]["template"]["spec"]
    guards = [c for c in pod.get("containers", []) if c.get("name") == "egress-guard"]
    return pod, guards[0] if len(guards) == 1 else None


def rules(path):
    pod, g = daemonset(path)
    if pod is None:
        return 1
    bad = []

    def want(ok, why):
        if not ok:
            bad.append(why)
    want(g is not None, "one container named egress-guard")
    if g is None:
        print("\n".join("fault " + b for b in bad))
        return 1
    env = {e["name"]: e.get("value") for e in g.get("env", [])}
    sc = g.get("securityContext", {})
    caps = sc.get("capabilities", {})
    vols = {v["name"]: v for v in pod.get("volumes", [])}
    mounts = {m["mountPath"]: m for m in g.get("volumeMounts", [])}
    # The guard: its own pod namespace, never the node's.
    for k in ("hostNetwork", "hostPID", "hostIPC"):
        want(pod.get(k, False) is False, "%s must be false or absent" % k)
    want(pod.get("automountServiceAccountToken") is False, "no service account token")
    want(env.get("EG_TENANTS") == "1", "EG_TENANTS=1 (run --tenants)")
    want("EG_POLICY" not in env and "EG_LISTEN" not in env and "EG_NETNS" not in env,
         "no EG_POLICY/EG_LISTEN/EG_NETNS in tenant mode")
    want(bool(env.get("EG_TRUST_KEYS")), "EG_TRUST_KEYS set")
    want(sc.get("privileged", False) is False, "not privileged")
    want(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation: false")
    want(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem: true")
    want(caps.get("drop") == ["ALL"], "capabilities.drop [ALL]")
    want(set(caps.get("add", [])) <= {"NET_ADMIN", "CHOWN", "SETUID", "SETGID", "DAC_READ_SEARCH"},
         "capabilities.add within NET_ADMIN CHOWN SETUID SETGID DAC_READ_SEARCH (the start "
         "as root that drops to 10001)")
    # The control socket on a hostPath the node agent reaches, and only
    # this container mounts it.
    ctl = env.get("EG_CONTROL", "/run/egress-guard/control.sock")
    cdir = ctl.rsplit("/", 1)[0]
    m = mounts.get(cdir)
    want(m is not None, "a volume mounted at %s (EG_CONTROL's folder)" % cdir)
    if m is not None:
        v = vols.get(m["name"], {})
        want("hostPath" in v and v["hostPath"].get("type") == "DirectoryOrCreate",
             "the control folder is a hostPath (DirectoryOrCreate): the node agent's way in")
        want(not m.get("readOnly", False), "the control folder is writable (the socket is made there)")
    st = env.get("EG_STATE_DIR", "/var/lib/egress-guard")
    m = mounts.get(st)
    want(m is not None and "hostPath" in vols.get(m["name"], {}),
         "the state folder on a hostPath: tenants.json and the epoch floors outlive the pod")
    want(len(pod.get("containers", [])) == 1 and not pod.get("initContainers"),
         "the guard alone in its pod: nothing else shares its namespace or its socket")
    for p in ("startupProbe", "livenessProbe"):
        want(g.get(p, {}).get("exec", {}).get("command", [])[-2:] == ["appliance", "health"],
             "%s is the image's health check" % p)
    for b in bad:
        print("fault " + b)
    if not bad:
        print("ok %s: the DaemonSet's guard rules" % path)
    return 1 if bad else 0


def docker_args(path):
    pod, g = daemonset(path)
    if g is None:
        return 1
    sc = g.get("securityContext", {})
    for e in g.get("env", []):
        print("-e")
        print("%s=%s" % (e["name"], e["value"]))
    if "runAsUser" in sc:
        print("--user")
        print("%d:%d" % (sc["runAsUser"], sc.get("runAsGroup", sc["runAsUser"])))
    for c in sc.get("capabilities", {}).get("drop", []):
        print("--cap-drop")
        print(c)
    for c in sc.get("capabilities", {}).get("add", []):
        print("--cap-add")
        print(c)
    if sc.get("readOnlyRootFilesystem"):
        print("--read-only")
    if sc.get("allowPrivilegeEscalation") is False:
        print("--security-opt")
        print("no-new-privileges:true")
    return 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("check", "daemonset", "docker-args"):
        sys.exit(__doc__)
    cmd = sys.argv[1]
    if cmd == "check":
        sys.exit(check(sys.argv[2:]))
    sys.exit(rules(sys.argv[2]) if cmd == "daemonset" else docker_args(sys.argv[2]))
