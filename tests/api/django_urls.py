"""The URLconf of tests/api/test_django.py's requests: a login view that checks a password
through Django's own API (``check_password``), as a login form's view does."""

from __future__ import annotations

from django.contrib.auth.hashers import check_password
from django.http import HttpResponse
from django.urls import path


def login(request):
    if check_password(request.POST["password"], request.POST["encoded"]):
        return HttpResponse("welcome")
    return HttpResponse("wrong password", status=401)


urlpatterns = [path("login", login)]
