"""A three-node OpenSearch cluster loses its cluster manager (SIGKILL) during searches and ingests: every
acknowledged write is there afterwards and searches keep answering (bench/opensearch_cluster.py, reduced)."""

import embedded
import pytest


@pytest.mark.slow
def test_three_nodes_lose_the_cluster_manager_without_losing_a_write_or_an_answer():
    if embedded.java() is None or not (embedded.built() or embedded.maven()):
        pytest.skip("no Java 17 and Maven for the embedded OpenSearch nodes (apt-get install openjdk-17-jdk-headless maven)")
    from bench.opensearch_cluster import run

    result = run(docs=15, settle_s=3, write=False)
    assert result["was_cluster_manager"] and result["acknowledged_missing"] == []
    assert result["searches_after_yellow"] > 0 and result["writes_after_yellow"] > 0  # both streams recovered
    # what the README promises: a node lost costs a pause, not an outage (the adapter retries dropped connections)
    assert result["search_longest_gap_s"] < 30 and result["write_longest_gap_s"] < 60
