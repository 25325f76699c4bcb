"""Oracle for the `!!omap` and Role-sort hash vectors (hash-vectors-extra.json).

Our own Python rendering of the original's documented behaviour (shared/reference/core-spec.md
§1.2-§1.5 and the loader notes of shared/compat/README.md), run on real PyYAML 6.0.3:

- loading: PyYAML `SafeLoader`, with `!!omap` built the way the original's loader library
  (anymarkup-core 0.8.1) registers it: an `OrderedDict` of the pairs PyYAML's own omap
  constructor yields, and the plain sequence constructor when that raises a ConstructorError;
- `$schema` removed, resource validation (kind/name, DNS-1123 subdomain outside RBAC kinds);
- canonicalisation (§1.4, in order) and `json.dumps(body, sort_keys=True)`, then sha256.

It needs Python >= 3.12 (the original runs 3.14): `str(OrderedDict)` is spelled
`OrderedDict({...})` there. PyYAML is pure Python, so the 3.11 copy can be borrowed:

    mkdir -p /tmp/pyyaml && ln -sfn "$(python3 -c 'import yaml,os;print(os.path.dirname(yaml.__file__))')" /tmp/pyyaml/yaml
    PYTHONPATH=/tmp/pyyaml python3.13 hash-oracle.py > hash-vectors-extra.json
"""

import base64
import collections
import copy
import hashlib
import json
import re
import sys

import yaml

assert sys.version_info >= (3, 12), "str(OrderedDict) must use the 3.12+ spelling"
assert yaml.__version__ == "6.0.3", yaml.__version__


class OracleLoader(yaml.SafeLoader):
    pass


def _omap_as_ordered_dict(loader, node):
    try:
        pairs = loader.construct_yaml_omap(node)
        return collections.OrderedDict(*pairs)
    except yaml.constructor.ConstructorError:
        return loader.construct_yaml_seq(node)


OracleLoader.add_constructor("tag:yaml.org,2002:omap", _omap_as_ordered_dict)

DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
RBAC_KINDS = {"Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding"}
QONTRACT_ANNOTATIONS = [
    "qontract.integration",
    "qontract.integration_version",
    "qontract.sha256sum",
    "qontract.update",
    "qontract.caller_name",
    "external-resources/updated_at",
]


class Stage(Exception):
    def __init__(self, stage, err):
        super().__init__(f"{type(err).__name__}: {err}")
        self.stage = stage


def validate(body):
    try:
        kind = body["kind"]
        name = body["metadata"]["name"]
    except (KeyError, TypeError) as e:
        raise ValueError(f"resource invalid data ({type(e).__name__})") from e
    assert name
    if kind not in RBAC_KINDS and (not DNS_SUBDOMAIN.match(name) or len(name) > 253):
        raise ValueError(f'The {kind} "{name}" is invalid')


def b64(value):
    return "" if not value else base64.b64encode(value.encode()).decode()


def canonicalize(body):
    body = copy.deepcopy(body)
    meta = body["metadata"]
    meta.setdefault("annotations", {})
    if meta["annotations"] is None:
        meta["annotations"] = {}
    ann = meta["annotations"]
    for k in ("creationTimestamp", "resourceVersion", "generation", "selfLink", "uid",
              "namespace", "managedFields"):
        meta.pop(k, None)
    ann.pop("kubectl.kubernetes.io/last-applied-configuration", None)
    body.pop("status", None)
    kind = body["kind"]
    # Only ManagedCluster has controller-managed labels; the vectors here use other kinds.
    if kind in {"ConfigMap", "Secret"} and body.get("type") == "Opaque":
        body.pop("type")
    if kind == "Secret":
        string_data = body.pop("stringData", None)
        if string_data:
            body.setdefault("data", {})
            for k, v in string_data.items():
                body["data"][k] = b64(str(v))
    if kind == "Role":
        for rule in body["rules"]:
            for field in ("resources", "verbs"):
                if field in rule:
                    rule[field].sort()
            if "attributeRestrictions" in rule and not rule["attributeRestrictions"]:
                rule.pop("attributeRestrictions")
    for a in QONTRACT_ANNOTATIONS:
        ann.pop(a, None)
    return body


def evaluate(text):
    try:
        body = yaml.load(text.encode("utf-8"), Loader=OracleLoader)
    except Exception as e:  # noqa: BLE001 - any loader failure rejects the file
        raise Stage("parse", e) from e
    value_repr = repr(body.get("spec", body.get("rules", body.get("stringData")))) if isinstance(body, dict) else repr(body)
    try:
        if not isinstance(body, dict):
            raise TypeError("the document is not a mapping")
        body.pop("$schema", None)
        validate(body)
    except Exception as e:  # noqa: BLE001
        raise Stage("construct", e) from e
    try:
        canonical_body = canonicalize(body)
    except Exception as e:  # noqa: BLE001
        raise Stage("canonicalize", e) from e
    try:
        canonical = json.dumps(canonical_body, sort_keys=True)
    except Exception as e:  # noqa: BLE001
        raise Stage("serialize", e) from e
    return canonical, value_repr


def resource(kind, name, rest, api="v1"):
    return f"apiVersion: {api}\nkind: {kind}\nmetadata:\n  name: {name}\n{rest}"


def role(rest, kind="Role"):
    return resource(kind, "r", rest, api="rbac.authorization.k8s.io/v1")


CASES = [
    # --- !!omap: the original loads an OrderedDict (a dict), not PyYAML's list of pairs ---
    ("omap-basic", ["omap"], resource("Example", "x", "spec: !!omap\n- b: 1\n- a: two\n- c: [1, 2]\n")),
    ("omap-flow", ["omap"], resource("Example", "x", "spec: !!omap [b: 1, a: 2]\n")),
    ("omap-nested", ["omap"], resource("Example", "x", "spec: !!omap\n- outer: !!omap\n  - z: 1\n  - inner: !!omap\n    - y: null\n    - x: [a]\n- plain: {k: v}\n")),
    ("omap-in-list", ["omap"], resource("Example", "x", "spec:\n  items:\n  - !!omap [a: 1]\n  - !!omap\n    - b: 2\n    - a: 1\n  - plain\n")),
    ("omap-empty", ["omap"], resource("Example", "x", "spec:\n  value: !!omap []\n")),
    ("omap-duplicate-keys", ["omap", "duplicate"], resource("Example", "x", "spec: !!omap\n- a: 1\n- b: 2\n- a: 3\n")),
    ("omap-duplicate-int-bool-keys", ["omap", "duplicate"], resource("Example", "x", "spec:\n  value: !!omap\n  - 1: one\n  - true: yes-true\n  - 2: two\n")),
    ("omap-int-keys", ["omap"], resource("Example", "x", "spec:\n  value: !!omap\n  - 10: a\n  - 9: b\n  - -1: c\n")),
    ("omap-mixed-keys", ["omap", "error"], resource("Example", "x", "spec:\n  value: !!omap\n  - 1: a\n  - b: c\n")),
    ("omap-metadata", ["omap"], "apiVersion: v1\nkind: ConfigMap\nmetadata: !!omap\n- name: cm\n- annotations: !!omap\n  - qontract.sha256sum: abc\n  - keep: v\n- uid: u-1\ndata: !!omap\n- k: v\n"),
    ("omap-anchor-alias", ["omap"], resource("Example", "x", "spec:\n  a: &m !!omap [k: v, j: w]\n  b: *m\n")),
    ("omap-fallback-multi-pair-item", ["omap", "fallback"], resource("Example", "x", "spec:\n  value: !!omap\n  - a: 1\n    b: 2\n")),
    ("omap-fallback-scalar-items", ["omap", "fallback"], resource("Example", "x", "spec:\n  value: !!omap [a, b]\n")),
    ("omap-fallback-after-pairs", ["omap", "fallback"], resource("Example", "x", "spec:\n  value: !!omap\n  - a: 1\n  - plain\n")),
    ("omap-fallback-merge-key", ["omap", "fallback", "merge"], resource("Example", "x", "spec:\n  value: !!omap\n  - <<: {a: 1}\n")),
    ("omap-value-key-first", ["omap", "error"], resource("Example", "x", "spec:\n  value: !!omap\n  - =: 1\n")),
    ("omap-value-key-after-fallback", ["omap", "fallback"], resource("Example", "x", "spec:\n  value: !!omap\n  - plain\n  - =: 1\n")),
    ("omap-not-a-sequence", ["omap", "error"], resource("Example", "x", "spec:\n  value: !!omap {a: 1}\n")),
    ("omap-unhashable-key", ["omap", "error"], resource("Example", "x", "spec:\n  value: !!omap\n  - ? [1]\n    : 2\n")),
    ("omap-secret-stringdata", ["omap", "Secret"], resource("Secret", "s", "stringData:\n  one: !!omap [a: 1, b: x]\n  empty: !!omap []\n  nested: [!!omap [k: true]]\n")),
    ("omap-secret-stringdata-is-omap", ["omap", "Secret"], resource("Secret", "s", "type: Opaque\ndata:\n  k: dg==\nstringData: !!omap\n- k: v\n- n: 1\n")),
    ("omap-role-rule", ["omap", "Role"], role("rules:\n- !!omap\n  - verbs: [list, get]\n  - resources: [pods, configmaps]\n  - attributeRestrictions: null\n")),
    # --- Role rules: Python list.sort() of resources/verbs, whatever the items are ---
    ("role-sort-bool-int-float", ["Role", "sort"], role("rules:\n- verbs: [true, 1, 1.0, false, 0]\n  resources: [2, true, 0.5, false]\n")),
    ("role-sort-yaml11-bools", ["Role", "sort"], role("rules:\n- verbs: [yes, no, on, off, 0]\n")),
    ("role-sort-equal-numbers-stable", ["Role", "sort"], role("rules:\n- verbs: [1, 1.0, true]\n  resources: [1.0, true, 1]\n")),
    ("role-sort-descending-with-ties", ["Role", "sort"], role("rules:\n- verbs: [3, 2, 2.0, true, 1, 0.5]\n")),
    ("role-sort-big-int-vs-float", ["Role", "sort"], role("rules:\n- verbs: [12345678901234567890, 1.0e+19, 9007199254740993, 9007199254740992.0]\n")),
    ("role-sort-nan", ["Role", "sort"], role("rules:\n- verbs: [2, .nan, 1, 0.5]\n  resources: [.nan, 1, .inf, -.inf]\n")),
    ("role-sort-lists", ["Role", "sort"], role("rules:\n- verbs: [[1, b], [1, a], [0], [1]]\n")),
    ("role-sort-str-int-mix", ["Role", "sort", "error"], role("rules:\n- verbs: [get, 1]\n")),
    ("role-sort-str-bool-mix", ["Role", "sort", "error"], role("rules:\n- resources: [pods]\n- verbs: [list, true, watch]\n")),
    ("role-sort-none-pair", ["Role", "sort", "error"], role("rules:\n- verbs: [null, null]\n")),
    ("role-sort-single-none", ["Role", "sort"], role("rules:\n- verbs: [null]\n  resources: [{a: 1}]\n")),
    ("role-sort-dicts", ["Role", "sort", "error"], role("rules:\n- resources: [{a: 1}, {a: 0}]\n")),
    ("role-sort-list-element-mix", ["Role", "sort", "error"], role("rules:\n- verbs: [[1], [a]]\n")),
    ("role-sort-list-equal-prefix", ["Role", "sort"], role("rules:\n- verbs: [[{a: 1}, 2], [{a: 1}, 1]]\n")),
    ("role-rules-dict-harmless", ["Role"], role("rules: {other: 1}\n")),
    ("role-rules-dict-field", ["Role", "error"], role("rules: {verbs: [b, a]}\n")),
    ("role-rules-empty-dict", ["Role"], role("rules: {}\n")),
    ("role-rules-string", ["Role"], role("rules: abc\n")),
    ("clusterrole-not-sorted", ["ClusterRole", "sort"], role("rules:\n- verbs: [get, 1, true]\n", kind="ClusterRole")),
]


def main():
    out = []
    for case_id, tags, text in CASES:
        entry = {"id": case_id, "format": "yaml", "text": text}
        try:
            canonical, value_repr = evaluate(text)
            entry["sha256"] = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
            entry["canonical"] = canonical
            entry["python_value"] = value_repr
        except Stage as e:
            entry["error"] = str(e)
            entry["error_stage"] = e.stage
        entry["tags"] = tags
        out.append(entry)
    json.dump(out, sys.stdout, indent=1, ensure_ascii=True)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
