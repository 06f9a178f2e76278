# ruff: noqa: E501  (HTML lines are kept whole so that the markup reads as it renders)
"""The report's one HTML page: a Jinja template with its style and its small script inline.

No external script, style sheet or font: the page is read from disk with no network. Every
table and plot is in the markup, so the page reads fully with scripts off; the script only adds
sorting (click a column head) and the search box (hidden until the script shows it).
"""

from __future__ import annotations

STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d1d1f}
header{background:#22303c;color:#fff;padding:14px 24px}
header h1{margin:0;font-size:20px} header p{margin:4px 0 0;color:#c9d3dc;font-size:12px}
main{padding:8px 24px 40px;max-width:1400px}
nav{font-size:13px;margin:10px 0} nav a{margin-right:14px}
h2{border-bottom:2px solid #22303c;padding-bottom:3px;margin-top:34px}
h3{margin:22px 0 6px} h4{margin:14px 0 4px}
table{border-collapse:collapse;margin:6px 0 14px;font-size:13px}
th,td{border:1px solid #d0d4d8;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#eef1f4;position:sticky;top:0}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
table.sortable th{cursor:pointer} table.sortable th:after{content:" \\2195";color:#9aa}
tr.hidden{display:none}
code,pre{font:12px/1.35 ui-monospace,SFMono-Regular,Menlo,monospace}
pre{background:#f6f8fa;border:1px solid #e1e4e8;padding:6px 8px;overflow:auto;max-height:320px}
details{margin:6px 0;border-left:3px solid #d0d4d8;padding-left:10px}
summary{cursor:pointer;font-weight:600}
.plots{display:flex;flex-wrap:wrap;gap:16px;align-items:flex-start}
figure{margin:0} figcaption{font-size:12px;color:#555;max-width:640px}
svg.plot{max-width:100%;height:auto}
.note{color:#555;font-size:12px}
.pill{display:inline-block;padding:0 6px;border-radius:8px;font-size:12px}
.killed,.Killed,.timeout{background:#d9ead3}.survived,.Survived{background:#f8d7d3}.build_error,.crashed{background:#fdebc8}
#search{position:sticky;top:0;background:#fff;padding:6px 0;z-index:2}
#search input{font-size:14px;padding:4px 8px;width:320px}
"""

SCRIPT = """
(function(){
  var box=document.getElementById('search');
  if(box){box.hidden=false;var input=box.querySelector('input');
    input.addEventListener('input',function(){
      var q=input.value.toLowerCase();
      document.querySelectorAll('table.searchable tbody tr').forEach(function(tr){
        tr.classList.toggle('hidden',q!==''&&tr.textContent.toLowerCase().indexOf(q)<0);});
      if(q){document.querySelectorAll('details').forEach(function(d){
        if(d.textContent.toLowerCase().indexOf(q)>=0){d.open=true;}});}
    });}
  function key(td){var v=td.getAttribute('data-v');if(v===null){v=td.textContent.trim();}
    var f=parseFloat(v);return (v!==''&&!isNaN(f)&&isFinite(v))?f:v.toLowerCase();}
  /* natural order, as the report's natural_key: digit runs as numbers (test_x[2] before test_x[10]) */
  function natural(a,b){var x=a.split(/(\\d+)/),y=b.split(/(\\d+)/);
    for(var i=0;i<Math.min(x.length,y.length);i++){if(x[i]===y[i]){continue;}
      if(i%2){var d=Number(x[i])-Number(y[i]);if(d!==0){return d<0?-1:1;}}
      return x[i]<y[i]?-1:1;}
    return x.length-y.length;}
  document.querySelectorAll('table.sortable').forEach(function(t){
    t.querySelectorAll('thead th').forEach(function(th,i){
      th.addEventListener('click',function(){
        var body=t.tBodies[0];if(!body){return;}
        var rows=Array.prototype.slice.call(body.rows);
        var dir=th.getAttribute('data-dir')==='asc'?'desc':'asc';
        t.querySelectorAll('thead th').forEach(function(o){o.removeAttribute('data-dir');});
        th.setAttribute('data-dir',dir);
        rows.sort(function(a,b){var x=key(a.cells[i]),y=key(b.cells[i]);
          var c=(typeof x!==typeof y)?(typeof x==='number'?-1:1):(typeof x==='number'?(x<y?-1:x>y?1:0):natural(x,y));
          return dir==='asc'?c:-c;});
        rows.forEach(function(r){body.appendChild(r);});
      });});});
})();
"""

TEMPLATE = r"""<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; img-src data:; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>{{ title }}</title>
<style>{{ style }}</style>
</head>
<body>
<header>
<h1>{{ title }}</h1>
<p>suitebench {{ version }} &middot; {{ sources|length }} result{{ '' if sources|length == 1 else 's' }}:
{% for s in sources %}<code>{{ s }}</code>{{ ', ' if not loop.last }}{% endfor %}</p>
</header>
<main>
<nav>
{% if audits %}<a href="#input-mode">Input mode</a>{% endif %}
{% if suites or implementations %}<a href="#suite-mode">Suite mode</a>{% endif %}
<a href="#environment">Environment</a>
</nav>
<div id="search" hidden><input type="search" placeholder="Search every table (ids, tests, reasons...)" aria-label="search"></div>
<noscript><p class="note">Scripts are off: every table and plot is shown; sorting and search need scripts.</p></noscript>

{% macro table(t, cls='') -%}
<table class="sortable searchable {{ cls }}"{% if t.id %} id="{{ t.id }}"{% endif %}>
<thead><tr>{% for h in t.head %}<th{% if t.numeric[loop.index0] %} class="n"{% endif %}>{{ h }}</th>{% endfor %}</tr></thead>
<tbody>
{% for row in t.rows %}<tr>{% for c in row %}<td{% if t.numeric[loop.index0] %} class="n"{% endif %}{% if c.sort is not none %} data-v="{{ c.sort }}"{% endif %}>{% if c.css %}<span class="pill {{ c.css }}">{{ c.text }}</span>{% elif c.code %}<code>{{ c.text }}</code>{% else %}{{ c.text }}{% endif %}</td>{% endfor %}</tr>
{% endfor %}</tbody>
</table>
{%- endmacro %}

{% macro plot(p) -%}
<figure>{{ p.svg|safe }}<figcaption>{{ p.caption }}</figcaption></figure>
{%- endmacro %}

{% if audits %}
<h2 id="input-mode">Input mode: arms audited with the certification chain</h2>
{% for a in audits %}
<h3 id="audit-{{ loop.index }}">Audit <code>{{ a.label }}</code></h3>
<p class="note">{{ a.problems|length }} problem(s): {{ a.problems|join(', ') }}; pool <code>{{ a.pool }}</code>; {{ a.ledger_rows }} certified finding(s) in the ledger, {{ a.retraction_rows }} retraction(s). Kill basis: {{ a.basis }}.</p>
<h4>Arms</h4>
{{ table(a.arms_table) }}
<h4>The funnel (certification chain, per arm)</h4>
{{ table(a.funnel_table) }}
{% if a.overlap_table %}<h4>Inputs shared with the official tests (leakage check)</h4>
{{ table(a.overlap_table) }}{% endif %}
<div class="plots">
{% for p in a.plots %}{{ plot(p) }}{% endfor %}
</div>
<h4>Killed submissions: every intersection of the arms</h4>
{{ table(a.regions_table) }}
<h4>Per problem</h4>
{% for pr in a.per_problem %}
<details{% if loop.first %} open{% endif %}>
<summary>{{ pr.problem }}: pool {{ pr.pool }}, {{ pr.ledger|length }} certified, {{ pr.retractions|length }} retracted</summary>
{{ table(pr.arms_table) }}
{% if pr.ledger %}<h4>Ledger: certified findings</h4>
{{ table(pr.ledger_table) }}{% else %}<p class="note">No certified finding on this problem.</p>{% endif %}
{% if pr.clusters %}<p class="note">Near-clone clusters of the certified findings (token 5-shingles, Jaccard &ge; 0.8, single linkage): {% for arm, cl in pr.clusters.items() %}<b>{{ arm }}</b>: {{ cl|length }} cluster(s) {% for c in cl %}[{{ c|join(', ') }}] {% endfor %}{% endfor %}</p>{% endif %}
{% if pr.retractions %}<h4>Retractions: flags the chain withdrew, and why</h4>
{{ table(pr.retractions_table) }}{% endif %}
{% if pr.build_errors %}<h4>Pool submissions that did not build</h4>
{{ table(pr.build_errors) }}{% endif %}
{{ plot(pr.heatmap) }}
</details>
{% endfor %}
{% endfor %}
{% endif %}

{% if suites or implementations %}
<h2 id="suite-mode">Suite mode: suites scored against the reference and its mutants</h2>
{% if suites %}
<h4>Suites</h4>
{{ table(suites_table) }}
{% endif %}
{% if implementations %}<h4>Candidate implementations: reference pass rate R</h4>
{{ table(implementations_table) }}{% endif %}
{% if suite_plots %}<div class="plots">{% for p in suite_plots %}{{ plot(p) }}{% endfor %}</div>{% endif %}
{% if suite_regions_table %}<h4>Killed mutants: every intersection of the suites ({{ suite_overlap_instances|join(', ') }})</h4>
{{ table(suite_regions_table) }}{% endif %}
{% if correlations_table %}<h4>Correlations (Spearman's &rho; with its 95% interval)</h4>
{{ table(correlations_table) }}{% endif %}
{% for s in suites %}
<details{% if s.survivor_files %} open{% endif %}>
<summary>{{ s.label }}: {{ s.instance }} / {{ s.suite }}, V {{ s.V }}, M {{ s.M }}{% if s.survivor_count %}, {{ s.survivor_count }} survived{% endif %}</summary>
{% if s.survivor_files %}<h4>Survivors: the changes no valid test notices, by file</h4>
{% for f in s.survivor_files %}<h5><code>{{ f.file }}</code>: {{ f.mutants|length }} survived</h5>
{% for m in f.mutants %}<p class="survived-mutant"><b>{{ m.id }}</b> <code>{{ m.where }}</code> {{ m.operator }} {{ m.description }}{% if m.target %}; meant to be killed by <code>{{ m.target }}</code>{% endif %}<br><span class="note">{{ m.reached }}</span></p>
<pre>{{ m.diff }}</pre>{% endfor %}{% endfor %}{% endif %}
{% if s.equivalent %}<p class="note">{{ s.equivalent|length }} mutant(s) marked equivalent, left out of M (listed below).</p>{% endif %}
{% if s.by_file_table %}<h4>M per file</h4>{{ table(s.by_file_table) }}{% endif %}
{% if s.by_function_table %}<h4>M per function</h4>{{ table(s.by_function_table) }}{% endif %}
{% if s.invalid_table %}<h4>Invalid and flaky tests (not counted in M), with the reason</h4>
{{ table(s.invalid_table) }}{% else %}<p class="note">Every test is valid.</p>{% endif %}
{% if s.excluded_table %}<h4>Tests excluded from the reference suite</h4>{{ table(s.excluded_table) }}{% endif %}
<h4>Mutants</h4>
{{ table(s.mutants_table) }}
{% if s.equivalent %}<h4>Equivalent mutants (not counted in M), with the reason</h4>
<ul>{% for m in s.equivalent %}<li><b>{{ m.id }}</b> [{{ m.kind }}] {{ m.reason }}{% if m.description %}: {{ m.description }}{% endif %}</li>{% endfor %}</ul>{% endif %}
{{ plot(s.heatmap) }}
{% if s.mutation_report %}<p class="note">The mutation-testing-elements report of this suite: <code>{{ s.mutation_report }}</code>.</p>{% endif %}
</details>
{% endfor %}
{% endif %}

<h2 id="environment">Environment</h2>
<p class="note">What produced each result: versions, isolation backend, limits, seeds and budgets.</p>
{{ table(environment_table) }}
</main>
<script>{{ script|safe }}</script>
</body>
</html>
"""
