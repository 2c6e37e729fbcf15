"""getAuthentication's `filter` as the SDK applies it: to the platform's picker (partner SSO) only, in both shapes
(an array of MVPD ids; the v2.4+ object {TV_PROVIDERS, FEATURED_TV_PROVIDERS}); the provider dialog stays whole."""
import pytest

from rpc_helper import RpcError
from test_partner_sso import ALL_MVPDS, HostFailure, cancel_picker, host, set_requestor  # noqa: F401 (fixtures)


def picker_request_and_dialog(daemon, params):
    """getAuthentication with `params`, the platform picker cancelled: (the picker's request params, the dialog's ids)."""
    daemon.take_requests()
    start = daemon.mark()
    get_id = daemon.send("getAuthentication", params)
    _, dialog = daemon.notification("displayProviderDialog", start)
    requests = [p for method, p in daemon.take_requests() if method == "partnerSSO/requestAccountMetadata"]
    cancel_picker(daemon, get_id, start)
    return requests, [m["ID"] for m in dialog["params"]["mvpds"]]


def test_object_filter_narrows_the_platform_picker_only(host):
    daemon = host(signed_in=None, picker=HostFailure("userCancelled"))
    set_requestor(daemon)
    requests, dialog = picker_request_and_dialog(
        daemon, {"filter": {"TV_PROVIDERS": ["MockPicker", "MockMVPD", "MockSSO"], "FEATURED_TV_PROVIDERS": ["MockSSO"]}})
    # MockMVPD has no partner SSO: ignored; the order given is kept.
    assert requests == [{"interruptionAllowed": True, "supportedProviderIds": ["MockPicker", "MockSSO"],
                         "featuredProviderIds": ["MockSSO"]}]
    assert dialog == ALL_MVPDS


def test_array_filter_is_the_platform_pickers_providers(host):
    daemon = host(signed_in=None, picker=HostFailure("userCancelled"))
    set_requestor(daemon)
    requests, dialog = picker_request_and_dialog(daemon, {"filter": ["MockPicker"]})
    assert requests == [{"interruptionAllowed": True, "supportedProviderIds": ["MockPicker"],
                         "featuredProviderIds": ["MockSSO", "MockPicker"]}]
    assert dialog == ALL_MVPDS


def test_a_filter_of_another_shape_is_refused(host):
    daemon = host(signed_in=None, picker=HostFailure("userCancelled"))
    set_requestor(daemon)
    for bad in [{"PROVIDERS": ["MockSSO"]}, {"TV_PROVIDERS": "MockSSO"}, "MockSSO"]:
        with pytest.raises(RpcError) as refused:
            daemon.call("getAuthentication", {"filter": bad})
        assert refused.value.code == -32602 and refused.value.error["data"]["param"] in ("filter", "TV_PROVIDERS")


def test_a_featured_provider_outside_tv_providers_is_refused_naming_it(host):
    """The SDK's rule: an MVPD in FEATURED_TV_PROVIDERS must also be in TV_PROVIDERS. The refusal names each id
    that breaks it, nothing reaches the platform, and the connection goes on (a subset is then accepted)."""
    daemon = host(signed_in=None, picker=HostFailure("userCancelled"))
    set_requestor(daemon)
    daemon.take_requests()
    bad = {"TV_PROVIDERS": ["MockSSO"], "FEATURED_TV_PROVIDERS": ["MockPicker", "MockSSO", "Elsewhere"]}
    with pytest.raises(RpcError) as refused:
        daemon.call("getAuthentication", {"filter": bad})
    error = refused.value.error
    assert error["code"] == -32602 and error["data"]["param"] == "filter"
    assert error["message"] == ("Invalid params: 'filter' FEATURED_TV_PROVIDERS has 'MockPicker', 'Elsewhere', not in "
                                "TV_PROVIDERS (featured MVPDs must be TV providers too)")
    assert daemon.take_requests() == []
    requests, dialog = picker_request_and_dialog(
        daemon, {"filter": {"TV_PROVIDERS": ["MockSSO", "MockPicker"], "FEATURED_TV_PROVIDERS": ["MockPicker"]}})
    assert requests == [{"interruptionAllowed": True, "supportedProviderIds": ["MockSSO", "MockPicker"],
                         "featuredProviderIds": ["MockPicker"]}]
    assert dialog == ALL_MVPDS
