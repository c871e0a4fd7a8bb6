"""Parquet and Feather/Arrow files (file or stream): the row count from their metadata, a sample
of their first rows read through pyarrow (imported only then: kernels do not load it at start)."""

from .columns import fill_from_frame
from .report import Refused, empty_table, reason
from .sources import binary_source, gzip_load_call


def parquet_table(path, compression, limits) -> dict:
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        parquet = pq.ParquetFile(binary_source(path, compression, limits))
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise Refused(f"it is a damaged or incomplete parquet file ({reason(exc)})") from None
    rows = parquet.metadata.num_rows
    nrows = max(1, min(limits["sample_rows"], rows))
    try:
        batch = next(parquet.iter_batches(batch_size=nrows), None)
        arrow = pa.Table.from_batches([batch]) if batch is not None else parquet.schema_arrow.empty_table()
        frame = arrow.to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise Refused(f"the parquet file's data is damaged ({reason(exc)})") from None
    return _sampled_table(path, frame, rows, gzip_load_call("pd.read_parquet", path, {}, compression), limits)


def feather_table(path, compression, kind, limits) -> dict:
    import pyarrow as pa

    source = binary_source(path, compression, limits)
    nrows = limits["sample_rows"]
    try:
        if kind == "feather1":
            import pyarrow.feather

            arrow = pyarrow.feather.read_table(source)
            rows, sample = arrow.num_rows, arrow.slice(0, nrows)
            load = gzip_load_call("pd.read_feather", path, {}, compression)
        elif kind == "arrow-stream":
            reader = pa.ipc.open_stream(source)
            batches, rows = [], 0
            for batch in reader:
                if rows < nrows:
                    batches.append(batch)
                rows += batch.num_rows
            sample = pa.Table.from_batches(batches, schema=reader.schema).slice(0, nrows)
            opener = f"__import__('gzip').open({path!r})" if compression else repr(path)
            load = f"__import__('pyarrow').ipc.open_stream({opener}).read_pandas()"
        else:
            reader = pa.ipc.open_file(pa.memory_map(path) if isinstance(source, str) else source)
            rows = reader.count_rows()
            batches, taken = [], 0
            for index in range(reader.num_record_batches):
                if taken >= nrows:
                    break
                batch = reader.get_batch(index)
                batches.append(batch)
                taken += batch.num_rows
            sample = pa.Table.from_batches(batches, schema=reader.schema).slice(0, nrows)
            load = gzip_load_call("pd.read_feather", path, {}, compression)
        frame = sample.to_pandas()
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise Refused(f"it is a damaged or incomplete Arrow/Feather file ({reason(exc)})") from None
    return _sampled_table(path, frame, rows, load, limits)


def _sampled_table(path: str, frame, rows: int, load: str, limits: dict) -> dict:
    """The table of a file of ``rows`` rows (as its metadata says), from ``frame``, its first rows."""
    table = empty_table(path)
    table["load"] = load
    table["rows"] = rows
    if rows > len(frame):
        table["sampled"], table["sample_rows"] = True, len(frame)
    fill_from_frame(table, frame, limits, [])
    return table
