"""An analyzer's cached facts carry their type's layout: facts another kivgraph wrote are analysed again.

Found on a checkout upgraded across a change of the SCIP route's facts type that kept the adapter's version
string: the cache entry decoded as the new type without an error and bound nothing, so a repository's exact
edges silently became CANDIDATE. The tag makes such an entry a miss (and a bundle of it a clear failure).
"""

from __future__ import annotations

import msgspec
import pytest

from indexer.languages import registry
from indexer.languages.spec import layout_tag
from snapshot_format.languages import IDS


@pytest.mark.parametrize("language", [lang for lang in IDS if registry.adapter_for(lang) is not None])
def test_facts_round_trip_behind_their_layout_tag(language: str) -> None:
    adapter = registry.adapter_for(language)
    assert adapter is not None
    facts = msgspec.convert({"analyzer_version": "x 1"}, adapter.facts_type)
    blob = adapter.encode(facts)
    assert blob.startswith(layout_tag(adapter.facts_type))
    assert adapter.decode(blob) == facts


def test_facts_of_another_layout_are_refused_not_misread() -> None:
    python = registry.adapter_for("python")
    go = registry.adapter_for("go")
    assert python is not None and go is not None
    assert layout_tag(python.facts_type) != layout_tag(go.facts_type)
    other = go.encode(msgspec.convert({"analyzer_version": "x 1"}, go.facts_type))
    with pytest.raises(msgspec.DecodeError, match="another layout"):
        python.decode(other)
    untagged = msgspec.msgpack.encode(msgspec.convert({"analyzer_version": "x 1"}, python.facts_type))
    with pytest.raises(msgspec.DecodeError, match="another layout"):
        python.decode(untagged)  # what a kivgraph before the tag wrote
