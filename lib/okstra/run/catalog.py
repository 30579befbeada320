"""Load the provider catalog (DESIGN §3): built-in YAML, then config overrides.

Order, later wins: `lib/okstra/run/providers.yaml`, the `providers:` block of
the global config (`$OKSTRA_ROOT/config.yaml`), the `providers:` block of the
project config (`.okstra/config.yaml`). An override entry merges over the
provider of the same id (its `models` merge by model id; other fields
replace); a new id must be a complete entry; `null` removes a provider or a
model. The merged document is validated by
`schemas/provider-catalog.schema.json`, then turned into `model.catalog`
records once.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from okstra.core import fsio, schemas
from okstra.core.errors import InputError
from okstra.model.catalog import Catalog, from_dict
from okstra.run import config

BUILTIN = Path(__file__).resolve().parent / "providers.yaml"
SCHEMA = "provider-catalog"


def builtin_document() -> dict[str, Any]:
    doc = config.parse_yaml(fsio.read_text(BUILTIN, what="provider catalog"), str(BUILTIN))
    if not isinstance(doc, Mapping) or not isinstance(doc.get("providers"), Mapping):
        raise InputError(f"{BUILTIN}: expected a mapping with a providers block")
    return dict(doc)


def merge(base: Mapping[str, Any], overrides: Mapping[str, Any], source: str) -> dict[str, Any]:
    """`base` providers with one `providers:` override block merged over them."""
    merged = copy.deepcopy(dict(base))
    for provider_id, entry in overrides.items():
        provider_id = str(provider_id)
        if entry is None:
            merged.pop(provider_id, None)
            continue
        if not isinstance(entry, Mapping):
            raise InputError(f"{source}: providers.{provider_id} must be a mapping")
        target = merged.setdefault(provider_id, {})
        for field, value in entry.items():
            if field == "models" and isinstance(value, Mapping) and isinstance(target.get("models"), Mapping):
                models = dict(target["models"])
                for model_id, model in value.items():
                    if model is None:
                        models.pop(str(model_id), None)
                    else:
                        models[str(model_id)] = (
                            {**models.get(str(model_id), {}), **model} if isinstance(model, Mapping) else model
                        )
                target["models"] = models
            else:
                target[str(field)] = copy.deepcopy(value)
    return merged


def _check(doc: dict[str, Any], sources: list[str]) -> None:
    where = " + ".join(sources)
    found = schemas.problems(SCHEMA, doc, remember=True)
    if found:
        more = f" (+{len(found) - 2} more)" if len(found) > 2 else ""
        raise InputError(f"provider catalog ({where}): {'; '.join(found[:2])}{more}", hint="fix the providers entry")
    for provider_id, entry in doc["providers"].items():
        if entry["defaultModel"] not in entry["models"]:
            raise InputError(
                f"provider catalog ({where}): providers.{provider_id}.defaultModel {entry['defaultModel']!r} is not one of its models",
                hint=f"known models: {', '.join(entry['models'])}",
            )


def document(project_root: Path | None = None) -> dict[str, Any]:
    """The merged, validated catalog document (as the schema describes it)."""
    doc = builtin_document()
    sources = [str(BUILTIN)]
    providers = doc["providers"]
    for source, block in config.providers_overrides(project_root):
        providers = merge(providers, block, source)
        sources.append(source)
    doc = {"providers": providers}
    _check(doc, sources)
    return doc


def load(project_root: Path | None = None) -> Catalog:
    """The provider catalog okstra uses for `project_root` (global config only when None)."""
    return from_dict(document(project_root))
