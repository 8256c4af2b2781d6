#!/usr/bin/env python3
"""The public surface of a crate, one line per item, from rustdoc's JSON output.

Usage: public-api.py <crate.json>  (made by `cargo rustdoc -p <crate> -- -Z unstable-options
--output-format json`, see scripts/public-api.sh). Lists every item reachable from the crate
root through public, non-hidden modules and re-exports: modules, types with their public
fields, variants and methods, traits with their items, functions, constants, the traits each
type implements (auto and blanket implementations left out). Signatures are not compared:
names, kinds and paths are, so an addition, removal, rename or move shows in review.
"""

import json
import sys


def hidden(item):
    return "hidden" in json.dumps(item.get("attrs", []))


def main(path):
    with open(path) as f:
        doc = json.load(f)
    index = doc["index"]
    paths = doc["paths"]
    out = set()

    def type_path(id_):
        p = paths.get(str(id_))
        return "::".join(p["path"]) if p else "?"

    def impls_of(prefix, impl_ids):
        for iid in impl_ids:
            impl_item = index.get(str(iid))
            if impl_item is None:
                continue
            impl = impl_item["inner"]["impl"]
            if impl.get("is_synthetic") or impl.get("blanket_impl") is not None:
                continue
            trait = impl.get("trait")
            if trait is not None:
                out.add(f"impl {trait['path']} for {prefix}")
                continue
            for mid in impl["items"]:
                m = index.get(str(mid))
                if m is None or m.get("visibility") != "public" or hidden(m):
                    continue
                kind = next(iter(m["inner"]))
                out.add(f"{kind} {prefix}::{m['name']}")

    def walk(module_id, prefix, seen):
        if module_id in seen:
            return
        seen.add(module_id)
        module = index[str(module_id)]
        for cid in module["inner"]["module"]["items"]:
            item = index.get(str(cid))
            if item is None or hidden(item):
                continue
            if item.get("visibility") != "public" and "use" not in item["inner"]:
                continue
            kind = next(iter(item["inner"]))
            inner = item["inner"][kind]
            name = item.get("name")
            here = f"{prefix}::{name}"
            if kind == "use":
                target = inner.get("id")
                here = f"{prefix}::{inner['name']}"
                target_item = index.get(str(target)) if target is not None else None
                if target_item is None or inner.get("is_glob"):
                    # An item of another crate (or a glob): named, not expanded.
                    glob = " (glob)" if inner.get("is_glob") else ""
                    out.add(f"use {here} = {inner['source']}{glob}")
                    continue
                item, cid = target_item, target
                kind = next(iter(item["inner"]))
                inner = item["inner"][kind]
            if kind == "module":
                out.add(f"module {here}")
                walk(cid, here, seen)
                continue
            out.add(f"{kind} {here}")
            if kind == "struct":
                shape = inner["kind"]
                fields = shape.get("plain", {}).get("fields", []) if isinstance(shape, dict) else []
                for fid in fields:
                    f = index.get(str(fid))
                    if f and f.get("visibility") == "public":
                        out.add(f"field {here}.{f['name']}")
                impls_of(here, inner.get("impls", []))
            elif kind == "enum":
                for vid in inner["variants"]:
                    v = index.get(str(vid))
                    if v:
                        out.add(f"variant {here}::{v['name']}")
                impls_of(here, inner.get("impls", []))
            elif kind == "trait":
                for tid in inner["items"]:
                    t = index.get(str(tid))
                    if t:
                        out.add(f"{next(iter(t['inner']))} {here}::{t['name']}")

    root = index[str(doc["root"])]
    walk(doc["root"], root["name"], set())
    for line in sorted(out):
        print(line)


if __name__ == "__main__":
    main(sys.argv[1])
