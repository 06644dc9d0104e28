"""The deployment files parse and agree with each other and with onemodeld.

Kubernetes (deploy/base): the kustomization lists every manifest; selectors match the pod
labels; container ports, Service targetPorts, probe ports, the ConfigMap's listen flags and
the Prometheus annotation name the same ports; the grace period outlasts the drain. The
ConfigMap, the compose file, the nginx upstreams and the Prometheus targets name variables,
services and ports that exist, and every metric the Grafana dashboard queries is one a running
onemodeld exports. Run through ctest (test deploy_manifests).
"""

import glob
import json
import os
import re
import urllib.request

import numpy as np
import pytest

import onemodel
from cluster import SHIPPED_NGINX_CONF, server_fixtures
from deploy_files import DEPLOY, onemodeld_env_names, yaml_documents

BASE = os.path.join(DEPLOY, 'base')


@pytest.fixture(scope='module')
def base():
    """{kind: manifest} of deploy/base (Services by name), after checking the kustomization."""
    (kustomization,) = yaml_documents(os.path.join(BASE, 'kustomization.yaml'))
    files = sorted(os.path.basename(p) for p in glob.glob(os.path.join(BASE, '*.yaml')))
    assert sorted(kustomization['resources']) == [f for f in files if f != 'kustomization.yaml'], \
        'deploy/base/kustomization.yaml must list every manifest of deploy/base'
    out = {'kustomization': kustomization}
    for name in kustomization['resources']:
        (doc,) = yaml_documents(os.path.join(BASE, name))
        key = doc['metadata']['name'] if doc['kind'] == 'Service' else doc['kind']
        assert key not in out, 'two manifests for %s' % key
        out[key] = doc
    return out


def container(base):
    """The Deployment's one container."""
    (c,) = base['Deployment']['spec']['template']['spec']['containers']
    return c


def flags(base):
    """The ConfigMap's ONEMODEL_* settings."""
    return base['ConfigMap']['data']


def test_every_yaml_and_json_file_under_deploy_parses():
    paths = [p for ext in ('yaml', 'yml', 'json') for p in
             glob.glob(os.path.join(DEPLOY, '**', '*.' + ext), recursive=True)]
    assert len(paths) >= 12
    for path in paths:
        if path.endswith('.json'):
            with open(path, encoding='utf-8') as f:
                json.load(f)
        else:
            assert yaml_documents(path), '%s is empty' % path


def test_selectors_match_the_pod_labels(base):
    deployment = base['Deployment']
    pod_labels = deployment['spec']['template']['metadata']['labels']
    selectors = [deployment['spec']['selector']['matchLabels'],
                 base['onemodeld']['spec']['selector'],
                 base['onemodeld-headless']['spec']['selector'],
                 base['PodDisruptionBudget']['spec']['selector']['matchLabels']]
    for selector in selectors:
        assert selector and selector.items() <= pod_labels.items()
    target = base['HorizontalPodAutoscaler']['spec']['scaleTargetRef']
    assert (target['kind'], target['name']) == ('Deployment', deployment['metadata']['name'])
    env_from = container(base)['envFrom']
    assert env_from == [{'configMapRef': {'name': base['ConfigMap']['metadata']['name']}}]


def test_ports_agree_across_flags_container_services_probes_and_scrape_annotation(base):
    c = container(base)
    ports = {p['name']: p['containerPort'] for p in c['ports']}
    assert flags(base)['ONEMODEL_LISTEN'] == '0.0.0.0:%d' % ports['grpc']
    assert flags(base)['ONEMODEL_METRICS_LISTEN'] == '0.0.0.0:%d' % ports['metrics']
    assert flags(base)['ONEMODEL_STATUS_PAGE'] == 'off', 'the status page would face the network'
    assert c['readinessProbe']['grpc']['port'] == ports['grpc']
    assert c['readinessProbe']['grpc']['service'] == 'onemodel.v1.OneModel'
    assert c['livenessProbe']['grpc']['port'] == ports['grpc']
    annotations = base['Deployment']['spec']['template']['metadata']['annotations']
    assert annotations['prometheus.io/scrape'] == 'true'
    assert int(annotations['prometheus.io/port']) == ports['metrics']
    assert annotations['prometheus.io/path'] == '/metrics'
    for service in ('onemodeld', 'onemodeld-headless'):
        for p in base[service]['spec']['ports']:
            assert p['targetPort'] in ports and p['port'] == ports[p['targetPort']], (service, p)
    assert base['onemodeld-headless']['spec']['clusterIP'] == 'None'
    assert [p['name'] for p in base['onemodeld-headless']['spec']['ports']] == ['grpc']


def test_the_grace_period_outlasts_the_drain_and_liveness_spares_a_draining_pod(base):
    drain = int(flags(base)['ONEMODEL_DRAIN_SECONDS'])
    spec = base['Deployment']['spec']['template']['spec']
    assert spec['terminationGracePeriodSeconds'] > drain
    liveness = container(base)['livenessProbe']
    # health answers NOT_SERVING while draining: liveness must not restart the pod meanwhile
    assert liveness['periodSeconds'] * liveness['failureThreshold'] > drain


def test_the_configmap_sets_only_variables_onemodeld_reads(base):
    assert set(flags(base)) <= onemodeld_env_names()


def test_the_disruption_budget_and_autoscaler_keep_replicas(base):
    assert base['PodDisruptionBudget']['spec']['maxUnavailable'] == 1
    hpa = base['HorizontalPodAutoscaler']['spec']
    assert hpa['minReplicas'] >= 2 and hpa['maxReplicas'] > hpa['minReplicas']
    assert hpa['behavior']['scaleDown']['policies'] == [{'type': 'Pods', 'value': 1, 'periodSeconds': 600}]


def test_prometheus_scrapes_the_annotated_pods_of_the_namespace(base):
    (config,) = yaml_documents(os.path.join(DEPLOY, 'prometheus', 'prometheus.yml'))
    (job,) = config['scrape_configs']
    (sd,) = job['kubernetes_sd_configs']
    assert sd['namespaces']['names'] == [base['kustomization']['namespace']]
    keep = {tuple(r['source_labels']): r['regex']
            for r in job['relabel_configs'] if r.get('action') == 'keep'}
    assert keep[('__meta_kubernetes_pod_label_app_kubernetes_io_name',)] == \
        base['Deployment']['spec']['template']['metadata']['labels']['app.kubernetes.io/name']
    assert keep[('__meta_kubernetes_pod_annotation_prometheus_io_scrape',)] == 'true'


def nginx_upstreams():
    """(host, port) of each upstream `server` line of the shipped nginx config."""
    with open(SHIPPED_NGINX_CONF, encoding='utf-8') as f:
        return re.findall(r'^\s*server\s+([^\s;]+):(\d+)\s', f.read(), re.M)


def test_compose_replicas_proxy_and_scrape_targets_agree():
    (compose,) = yaml_documents(os.path.join(DEPLOY, 'compose.yaml'))
    services = compose['services']
    replicas = sorted(n for n in services if n.startswith('onemodeld-'))
    assert len(replicas) == 3
    assert sorted(host for host, _ in nginx_upstreams()) == replicas
    assert {int(port) for _, port in nginx_upstreams()} == {50051}  # the Dockerfile's ONEMODEL_LISTEN
    (scrape,) = yaml_documents(os.path.join(DEPLOY, 'prometheus', 'compose.yml'))
    (job,) = scrape['scrape_configs']
    (static,) = job['static_configs']
    assert sorted(static['targets']) == ['%s:9464' % r for r in replicas]
    for service in services.values():  # every file the compose file mounts exists
        for volume in service.get('volumes', []):
            source = volume.split(':')[0]
            assert os.path.exists(os.path.join(DEPLOY, source)), volume
    assert services['nginx']['volumes'][0].startswith('./nginx/nginx.conf:/etc/nginx/nginx.conf')
    assert all(services['nginx']['depends_on'][r]['condition'] == 'service_healthy' for r in replicas)


def queried_metrics(dashboard):
    """The onemodel_* and process_* metric families the dashboard's panels query (histogram
    suffixes removed)."""
    exprs = [t['expr'] for p in dashboard['panels'] for t in p.get('targets', [])]
    names = {n for e in exprs for n in re.findall(r'\b(?:onemodel|process)_[a-z_]+', e)}
    return {re.sub(r'_(bucket|sum|count)$', '', n) for n in names}


def exported_metrics():
    """The metric families a running onemodeld exports once a session has a tensor."""
    replica = server_fixtures.start_server()
    try:
        with onemodel.Client(replica.grpc) as client, client.session() as s:
            s.put(np.ones((4, 4), np.float32))
            with urllib.request.urlopen('http://%s/metrics' % replica.metrics, timeout=10) as reply:
                text = reply.read().decode()
    finally:
        server_fixtures.stop_and_check(replica)
    return set(re.findall(r'^# TYPE (\S+) ', text, re.M))


def test_the_dashboard_queries_only_metrics_onemodeld_exports():
    with open(os.path.join(DEPLOY, 'grafana', 'onemodeld.json'), encoding='utf-8') as f:
        dashboard = json.load(f)
    ids = [p['id'] for p in dashboard['panels']]
    assert len(ids) == len(set(ids))
    queried = queried_metrics(dashboard)
    exported = exported_metrics()
    assert queried - exported == set(), 'the dashboard queries metrics onemodeld does not export'
    # pool, arena, session, request and process metrics and the build all have panels
    for family in ('onemodel_pool_', 'onemodel_arena_', 'onemodel_session', 'onemodel_rpc_',
                   'process_', 'onemodel_build_info'):
        assert any(n.startswith(family) for n in queried), family
    (provisioning,) = yaml_documents(os.path.join(DEPLOY, 'grafana', 'provisioning', 'dashboards.yaml'))
    (provider,) = provisioning['providers']
    (compose,) = yaml_documents(os.path.join(DEPLOY, 'compose.yaml'))
    mounts = [v.split(':')[1] for v in compose['services']['grafana']['volumes']]
    assert os.path.join(provider['options']['path'], 'onemodeld.json') in mounts
