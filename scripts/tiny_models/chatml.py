"""ChatML chat templates (`<|im_start|>role ... <|im_end|>`) for the Qwen families, each family
naming the placeholder text its processor expands for an image, a video and an audio part."""

from __future__ import annotations

_TEMPLATE = r"""{#- ChatML for the tiny @FAMILY@ checkpoint. Media parts become the placeholders
    its processor expands. -#}
{%- macro render_content(content) -%}
    {%- if content is not defined or content is none -%}
    {%- elif content is string -%}
        {{- content -}}
    {%- else -%}
        {%- for part in content -%}
            {%- if part is string -%}
                {{- part -}}
            {%- else -%}
                {%- set kind = part.get('type', '') -%}
                {%- if kind == 'text' -%}
                    {{- part.get('text', '') -}}
@MEDIA@                {%- endif -%}
            {%- endif -%}
        {%- endfor -%}
    {%- endif -%}
{%- endmacro -%}
{%- for message in messages -%}
    {{- '<|im_start|>' + message['role'] + '\n' -}}
    {{- render_content(message['content']) -}}
    {{- '<|im_end|>\n' -}}
{%- endfor -%}
{%- if add_generation_prompt -%}
    {{- '<|im_start|>assistant\n' -}}
{%- endif -%}
"""

_KINDS = {
    "image": "['image', 'image_url', 'image_pil']",
    "video": "['video', 'video_url']",
    "audio": "['audio', 'audio_url', 'input_audio']",
}


def chatml_template(family: str, placeholders: dict[str, str]) -> str:
    """The template for `family`; `placeholders` maps image / video / audio to the text a part
    of that kind becomes (a kind left out renders as nothing)."""
    media = ""
    for kind, text in placeholders.items():
        media += (
            f"                {{%- elif kind in {_KINDS[kind]} -%}}\n"
            f"                    {{{{- {text!r} -}}}}\n"
        )
    return _TEMPLATE.replace("@FAMILY@", family).replace("@MEDIA@", media)
