"""The OpenSearch adapter against the same contract, on a real engine.

By default on the embedded OpenSearch 2.19 + k-NN node that tools/opensearch builds (the `opensearch_url`
fixture starts it once per run); on any other cluster with, for example:
    OPENSEARCH_URL=opensearch://localhost:9200 make test
    OPENSEARCH_URL='opensearch+https://search-xyz.eu-west-1.es.amazonaws.com?aws=es' make test
Each test uses its own index, deleted afterwards.
"""

import pytest
from index_contract import IndexContract
from sourcerer.retrieval.embedders import local_embedder


class TestOpenSearchIndex(IndexContract):
    @pytest.fixture
    def index(self, opensearch_index):
        return opensearch_index(local_embedder())
