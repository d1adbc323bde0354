"""Plain result objects over the library's JSON (counts are named *_count there, as here)."""

import json

def dataframe(rows, columns=None):
    """A pandas DataFrame of `rows` (dicts); pandas is imported here, not at `import nnergy`."""
    import pandas
    return pandas.DataFrame(list(rows), columns=columns)


class Record:
    """A result with its fields as attributes (units in their names: _s, _j, _w, _mhz, _bytes),
    plus to_dict() and to_json()."""

    def __init__(self, fields):
        object.__setattr__(self, "_fields", dict(fields))

    def __getattr__(self, name):
        if name.startswith("_"):  # copy and pickle probe before __init__ ran
            raise AttributeError(name)
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field '{name}'; fields: {', '.join(self._fields)}"
            ) from None

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is read-only")

    def __dir__(self):
        return list(self._fields) + ["to_dict", "to_json"]

    def __getitem__(self, name):
        return self._fields[name]

    def to_dict(self):
        """The fields as a plain dict (a copy)."""
        return json.loads(json.dumps(self._fields))

    def to_json(self, indent=None):
        """The fields as JSON text."""
        return json.dumps(self._fields, indent=indent)

    def __repr__(self):
        shown = ", ".join(f"{k}={v!r}" for k, v in self._fields.items()
                          if not isinstance(v, (dict, list)))
        return f"{type(self).__name__}({shown})"
