"""The OpenSearch adapter against the same contract, on a real cluster when OPENSEARCH_URL is set.

Run it with, for example:
    OPENSEARCH_URL=opensearch://localhost:9200 make test
    OPENSEARCH_URL='opensearch+https://search-xyz.eu-west-1.es.amazonaws.com?aws=es' make test
Each test uses its own index, deleted afterwards.
"""

import os
import uuid

import pytest
from index_contract import IndexContract
from sourcerer.retrieval.embedders import local_embedder

URL = os.environ.get("OPENSEARCH_URL")


@pytest.mark.integration
@pytest.mark.skipif(
    not URL, reason="set OPENSEARCH_URL=opensearch://host:9200 to run the Index contract against a real OpenSearch"
)
class TestOpenSearchIndex(IndexContract):
    @pytest.fixture
    def index(self):
        from sourcerer.store import open_index

        base, _, query = URL.partition("?")
        name = f"sourcerer-contract-{uuid.uuid4().hex[:10]}"
        index = open_index(f"{base.rstrip('/')}/{name}" + (f"?{query}" if query else ""), embedder=local_embedder())
        index.init()
        yield index
        index.client.indices.delete(index=name)
