"""The cloud path a deployer relies on, checked offline: the search-tier templates and template.yaml pass
cfn-lint, samconfig.toml lists every parameter, the CI workflow is valid and runs the suite against OpenSearch,
the capacity model's tables in docs/scaling.md are what the script prints, and the parity benchmark compares
what it says it compares."""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
FUNCTIONS = (
    "IngestFunction",
    "IngestS3Function",
    "EmbedFunction",
    "SearchFunction",
    "AnswerFunction",
    "AnswerStreamFunction",
    "AuditFunction",
)


def _load(path: Path) -> dict:
    from cfnlint.decode import decode

    template, errors = decode(str(path))
    assert not errors
    return template


@pytest.mark.parametrize("name", ["opensearch-serverless.yaml", "opensearch-domain.yaml"])
def test_search_tier_templates_pass_cfn_lint_and_output_what_the_app_stack_needs(name):
    path = ROOT / "infra" / name
    linted = subprocess.run([Path(sys.executable).parent / "cfn-lint", str(path)], capture_output=True, text=True)
    assert linted.returncode == 0, linted.stdout  # errors and warnings (in the default region, us-east-1)
    template = _load(path)
    assert {"IndexUrl", "PrincipalArns"} <= set(template["Outputs"]) | set(template["Parameters"])
    assert ("CollectionArn" if "serverless" in name else "DomainArn") in template["Outputs"]


def test_serverless_policies_scope_the_collection_and_its_index_to_the_given_principals():
    resources = _load(ROOT / "infra" / "opensearch-serverless.yaml")["Resources"]
    kinds = {r["Properties"]["Type"] for r in resources.values() if r["Type"] == "AWS::OpenSearchServerless::SecurityPolicy"}
    assert kinds == {"encryption", "network"}
    data = resources["DataAccessPolicy"]["Properties"]
    assert data["Type"] == "data"
    policy_text = data["Policy"]["Fn::Sub"][0]
    assert "index/${CollectionName}/${IndexName}" in policy_text and "aoss:*" not in policy_text
    assert resources["Collection"]["Properties"]["Type"] == "VECTORSEARCH"


def test_samconfig_lists_every_template_parameter_for_each_environment():
    parameters = set(_load(ROOT / "template.yaml")["Parameters"])
    config = tomllib.loads((ROOT / "samconfig.toml").read_text())
    for env in ("dev", "prod"):
        listed = {item.split("=", 1)[0] for item in config[env]["deploy"]["parameters"]["parameter_overrides"]}
        assert listed == parameters, env


def test_the_template_wires_vpc_bedrock_profiles_usage_plans_and_alarms():
    template = _load(ROOT / "template.yaml")
    resources = template["Resources"]
    assert "Fn::If" in template["Globals"]["Function"]["VpcConfig"]  # only when SubnetIds are given
    for name in ("AnswerFunction", "AuditFunction"):
        statements = [s for p in resources[name]["Properties"]["Policies"] if "Statement" in p for s in p["Statement"]]
        text = str(statements)
        assert "inference-profile/${ChatModel}" in text and "bedrock:InferenceProfileArn" in text, name
    plans = [r for r in resources.values() if r["Type"] == "AWS::ApiGateway::UsagePlan"]
    assert len(plans) == 3
    alarms = {r["Properties"]["MetricName"] for r in resources.values() if r["Type"] == "AWS::CloudWatch::Alarm"}
    assert alarms == {"5XXError", "Latency", "ApproximateNumberOfMessagesVisible", "AuditErrors", "AuditIncomplete"}
    audit_service = resources["AuditFunction"]["Properties"]["Environment"]["Variables"]["POWERTOOLS_SERVICE_NAME"]
    for name in ("AuditErrorsAlarm", "AuditIncompleteAlarm"):  # the metric the function emits, under its dimension
        assert resources[name]["Properties"]["Dimensions"] == [{"Name": "service", "Value": audit_service}]
    roles = str(template["Outputs"]["FunctionRoleArns"]["Value"])
    assert all(f"{name}Role" in roles for name in FUNCTIONS)


def test_the_streaming_answer_function_streams_the_same_server_through_a_function_url():
    """Python's managed runtime cannot stream a response itself: the Lambda Web Adapter runs `sourcerer serve` (the
    server whose event streams the e2e tests read) and streams what it writes through a RESPONSE_STREAM URL."""
    resources = _load(ROOT / "template.yaml")["Resources"]
    function = resources["AnswerStreamFunction"]["Properties"]
    assert function["FunctionUrlConfig"] == {"AuthType": "NONE", "InvokeMode": "RESPONSE_STREAM"}
    variables = function["Environment"]["Variables"]
    assert variables["AWS_LAMBDA_EXEC_WRAPPER"] == "/opt/bootstrap" and variables["AWS_LWA_INVOKE_MODE"] == "response_stream"
    assert "LambdaAdapterLayerArm64" in str(function["Layers"])
    script = ROOT / "functions" / "answer_stream" / function["Handler"]
    assert script.stat().st_mode & 0o111, "the adapter runs the handler script: it must be executable"
    command = script.read_text().splitlines()[-1]
    assert command.startswith("exec python -m sourcerer.cli serve") and '"${PORT:-8080}"' in command
    assert "gunicorn" in (script.parent / "requirements.txt").read_text()
    actions = str(function["Policies"])
    assert "bedrock:InvokeModelWithResponseStream" in actions and "HandoffQueue" in actions


def test_the_ci_workflow_is_valid_and_runs_the_suite_and_parity_against_opensearch():
    workflow = ROOT / ".github" / "workflows" / "ci.yml"
    checked = subprocess.run(
        [Path(sys.executable).parent / "check-jsonschema", "--builtin-schema", "vendor.github-workflows", str(workflow)],
        capture_output=True,
        text=True,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    jobs = yaml.safe_load(workflow.read_text())["jobs"]
    assert any("bash .ci/run" in step.get("run", "") for step in jobs["test"]["steps"])
    opensearch = jobs["opensearch"]
    assert re.match(r"opensearchproject/opensearch:2\.\d+", opensearch["services"]["opensearch"]["image"])
    assert opensearch["env"]["OPENSEARCH_URL"].startswith("opensearch://localhost:9200")
    runs = " ".join(step.get("run", "") for step in opensearch["steps"])
    assert "pytest" in runs and "bench.opensearch_parity" in runs


def test_the_scaling_doc_holds_the_tables_the_capacity_model_prints():
    from bench.capacity import SCALING, SCENARIOS, Assumptions, estimate, report, with_report

    current = SCALING.read_text(encoding="utf-8")
    expected = with_report(current, report([estimate(w, Assumptions.measured()) for w in SCENARIOS]))
    assert current == expected, "run `python -m bench.capacity` to refresh docs/scaling.md"


def test_the_capacity_model_grows_with_the_workload_and_flags_a_hot_tenant():
    from bench.capacity import Assumptions, Workload, estimate

    small = estimate(Workload(tenants=10), Assumptions())
    large = estimate(Workload(tenants=1000), Assumptions())
    assert large["opensearch"]["knn_memory_gib"] > 50 * small["opensearch"]["knn_memory_gib"]
    hot = estimate(Workload(tenants=10, searches_per_s=500, answers_per_s=100, busiest_tenant_share=0.5), Assumptions())
    assert hot["dynamodb"]["hot_partition"] and hot["dynamodb"]["partition_key_shards_needed"] > 1
    assert any("DynamoDB" in line for line in hot["breaks_first"])
    extractive = estimate(Workload(llm="none (extractive)"), Assumptions())
    assert extractive["bedrock"]["llm_tokens_per_minute_peak"] == 0


def test_the_parity_comparison_measures_gap_and_agreement():
    from bench.opensearch_parity import compare

    qrels = {"q1": {"d1": 1}, "q2": {"d2": 1}}
    same = {m: {"q1": ["d1", "d3"], "q2": ["d2"]} for m in ("keyword", "hybrid")}
    worse = {"keyword": {"q1": ["d3", "d1"], "q2": ["d2"]}, "hybrid": same["hybrid"]}
    assert compare({"sqlite": same, "other": same}, qrels)["passed"]
    drifted = compare({"sqlite": same, "other": worse}, qrels)
    assert not drifted["passed"] and drifted["keyword"]["same_top10"] == 0.5 and drifted["keyword"]["ndcg_gap"] > 0.01


def test_the_mixed_load_ceiling_adds_one_embedding_per_new_question_to_the_peers_cost():
    """`bench.mixed.ceiling`: 2 cores at 200 req/s spend 10 ms per request; a 40 ms embedding for every request
    caps the askers at 40 req/s, for one request in five at 111 req/s, and with no new question at the peer's."""
    from bench.mixed import ceiling

    assert ceiling(200, 40, 1.0, cores=2) == pytest.approx(40.0)
    assert ceiling(200, 40, 0.2, cores=2) == pytest.approx(2000 / 18)
    assert ceiling(200, 40, 0.0, cores=2) == pytest.approx(200.0)
    assert ceiling(200, 40, 0.2, cores=2, background_share=0.25) == pytest.approx(0.75 * 2000 / 18)  # a quarter of the cores embed


def test_a_servers_cpu_is_split_into_its_background_threads_by_their_nice_value():
    """`bench.common.server_cpu_seconds` reads every thread of a process tree; a thread that lowered its priority
    (as the background embedder does) counts as background, and the main thread's work does not."""
    import subprocess
    import sys

    from bench.common import server_cpu_seconds

    busy = (
        "import os, threading, time\n"
        "def spin(seconds):\n"
        "    while time.thread_time() < seconds: pass\n"
        "def background(done):\n"
        "    os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 10)\n"
        "    spin(0.3); done.set(); time.sleep(60)\n"
        "done = threading.Event()\n"
        "threading.Thread(target=background, args=(done,), daemon=True).start()\n"
        "spin(0.3); done.wait(); print('done', flush=True); time.sleep(60)\n"
    )
    child = subprocess.Popen([sys.executable, "-c", busy], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline().strip() == "done"
        cpu = server_cpu_seconds(child.pid)
    finally:
        child.kill()
        child.wait()
    assert cpu.total >= 0.55  # both threads' 0.3 s
    assert 0.25 <= cpu.background <= 0.45  # the niced thread's alone


def test_exploratory_benchmark_labels_quote_their_documents():
    """Every answer the exploratory benchmark expects is text of its business's pages, word for word (a label with a
    typo would count a right answer wrong), and every set asks both answerable questions and near-misses."""
    from sourcerer.passage_files import load_passages

    from bench.exploratory import load

    sets = load()
    assert len(sets) >= 8 and len({s["lang"] for s in sets}) >= 7
    for s in sets:
        text = " ".join(" ".join(p["text"].split()) for p in load_passages(s["docs"]))
        expected = [item["a"] for item in s["questions"]]
        assert any(e is None for e in expected) and any(e for e in expected), s["name"]
        for item in s["questions"]:
            for quote in item["a"] or []:
                assert " ".join(quote.split()) in text, (s["name"], item["q"], quote)
        assert len({item["q"] for item in s["questions"]}) == len(s["questions"]), s["name"]


def test_claim_veto_benchmark_counts_an_answer_faithful_only_where_no_claim_it_reads_falls_under_the_bar():
    """`bench.claim_veto.faithful_at`: the judge's verdict stands unless a claim the veto reads falls under the bar;
    `whole_only` reads only the claims the answer as a whole carried, and a rejected answer stays rejected."""
    from bench.claim_veto import faithful_at

    passed = (True, [(0.30, False), (0.08, True)])  # (judge passed, [(claim head's reading, carried by the whole)])
    assert faithful_at(passed, 0.0, whole_only=False)
    assert faithful_at(passed, 0.05, whole_only=False) and not faithful_at(passed, 0.09, whole_only=False)
    assert not faithful_at(passed, 0.09, whole_only=True) and faithful_at((True, [(0.08, False)]), 0.09, whole_only=True)
    assert not faithful_at((False, [(0.9, False)]), 0.0, whole_only=False)
