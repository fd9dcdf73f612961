"""Naming: Kedro catalog entries to OpenLineage datasets.

Decisions (see the README):
- A dataset is named by its catalog name in the project namespace, so lineage reads like the pipeline.
- File-backed datasets also carry a `symlinks` identifier with the storage name from the OpenLineage naming spec
  (`file` + absolute path, `s3://bucket` + key, `gs://bucket` + key, `abfss://container@account.dfs.core.windows.net`
  + path, `hdfs://host:port` + path), so the same file written by another tool joins the graph.
- A transcoded entry (`x@pandas`, `x@spark`) is one dataset `x`: the suffix names a loader, not data.
- MemoryDatasets are kept as datasets (in the project namespace, no symlink): dropping them would cut the
  lineage between the nodes they connect.
- Parameters (`parameters`, `params:*`) are not datasets; they travel as run facets.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

TRANSCODING_SEPARATOR = "@"


def dataset_name(catalog_name: str) -> str:
    """The OpenLineage dataset name of a catalog entry: the entry without its transcoding suffix."""
    return catalog_name.split(TRANSCODING_SEPARATOR, 1)[0]


def is_parameter(catalog_name: str) -> bool:
    return catalog_name == "parameters" or catalog_name.startswith("params:")


@dataclass(frozen=True)
class StorageName:
    namespace: str
    name: str


def _path_of(dataset: Any) -> tuple[str | None, str | None, dict[str, Any]]:
    protocol = getattr(dataset, "_protocol", None)
    filepath = getattr(dataset, "_filepath", None)
    if filepath is None:
        filepath = getattr(dataset, "_path", None)
    options = getattr(dataset, "_storage_options", None) or {}
    return (str(protocol) if protocol else None, str(filepath) if filepath is not None else None,
            options if isinstance(options, dict) else {})


def storage_name(dataset: Any, project_path: str | os.PathLike[str] | None = None) -> StorageName | None:
    """The storage name of a file-backed dataset per the OpenLineage naming spec, or None when it has none."""
    protocol, filepath, options = _path_of(dataset)
    if filepath is None:
        return None
    if "://" in filepath:
        protocol, filepath = filepath.split("://", 1)
    protocol = (protocol or "file").lower()
    if protocol in ("file", "local"):
        path = filepath if os.path.isabs(filepath) else os.path.join(os.fspath(project_path or os.getcwd()), filepath)
        return StorageName("file", os.path.normpath(path))
    bucket, _, key = filepath.lstrip("/").partition("/")
    if protocol in ("s3", "s3a", "s3n"):
        return StorageName(f"s3://{bucket}", key)
    if protocol in ("gcs", "gs"):
        return StorageName(f"gs://{bucket}", key)
    if protocol in ("abfs", "abfss", "az"):
        container, account = bucket, options.get("account_name")
        if "@" in container:
            container, host = container.split("@", 1)
            return StorageName(f"abfss://{container}@{host}", key)
        if not account:
            return None
        return StorageName(f"abfss://{container}@{account}.dfs.core.windows.net", key)
    if protocol == "hdfs":
        return StorageName(f"hdfs://{bucket}", "/" + key)
    return StorageName(f"{protocol}://{bucket}", key)


def local_file(dataset: Any, project_path: str | os.PathLike[str] | None = None) -> str | None:
    """The local path of a file-backed dataset, for its size; None for remote or non-file datasets."""
    name = storage_name(dataset, project_path)
    if name is None or name.namespace != "file":
        return None
    return name.name


def dataset_type(dataset: Any) -> str:
    cls = type(dataset)
    module = cls.__module__
    # kedro_datasets.pandas.csv_dataset.CSVDataset -> kedro_datasets.pandas.CSVDataset, as catalog.yml spells it.
    parts = module.split(".")
    if len(parts) > 2 and parts[0] in ("kedro_datasets", "kedro"):
        module = ".".join(parts[:-1])
    return f"{module}.{cls.__name__}"


def is_memory(dataset: Any) -> bool:
    return type(dataset).__name__ in ("MemoryDataset", "SharedMemoryDataset")


def format_of(dataset: Any) -> str | None:
    protocol, filepath, _ = _path_of(dataset)
    if filepath is None:
        return None
    suffix = PurePosixPath(filepath).suffix.lstrip(".").lower()
    return suffix or None
