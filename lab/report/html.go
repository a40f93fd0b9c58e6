package report

import (
	"encoding/base64"
	"html/template"
	"time"
)

// htmlPage is the offline report: styles inline, charts as data: URIs, no
// external resources of any kind.
var htmlPage = template.Must(template.New("report").Funcs(template.FuncMap{
	"png": func(b []byte) template.URL {
		return template.URL("data:image/png;base64," + base64.StdEncoding.EncodeToString(b))
	},
	"seconds": func(d time.Duration) int { return max(1, int(d.Round(time.Second)/time.Second)) },
	"marked": func(t Table, i int) string {
		if i < len(t.Marks) {
			return t.Marks[i]
		}
		return ""
	},
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
{{with .Live}}{{if .Refresh}}<meta http-equiv="refresh" content="{{seconds .Refresh}}">
{{end}}{{end}}<title>{{.Title}}</title>
<style>
body { font-family: system-ui, sans-serif; margin: 2em auto; max-width: 78em; padding: 0 1em; color: #222; }
h1 { font-size: 1.6em; } h2 { margin-top: 2em; border-bottom: 1px solid #ccc; }
table { border-collapse: collapse; margin: 0.8em 0; font-size: 0.9em; }
th, td { border: 1px solid #ccc; padding: 0.25em 0.6em; text-align: right; }
th { background: #f2f2f2; } td:first-child, th:first-child { text-align: left; }
tr.marked td { background: #fff4e0; }
table.detail { font-size: 0.8em; margin-top: -0.4em; }
caption { text-align: left; font-weight: bold; padding: 0.3em 0; }
.foot { font-size: 0.85em; color: #555; margin: 0.2em 0; }
.live { background: #f3fbef; border: 1px solid #8bc34a; padding: 0.5em 0.8em; margin: 0 0 1em; }
.finding { background: #eef5ff; padding: 0.5em 0.8em; margin: 0.4em 0; border-left: 4px solid #4a7bd0; }
img { max-width: 100%; margin: 0.6em 0; border: 1px solid #eee; }
</style>
</head>
<body>
{{with .Live}}<div class="live" id="live"><strong>{{.Title}}</strong>{{range .Lines}}<br>{{.}}{{end}}</div>
{{end}}<h1>{{.Title}}</h1>
{{range .Summary}}<p>{{.}}</p>
{{end}}
{{if .Seeds}}<h2 id="seeds">Seeds beside this machine</h2>
{{template "table" .Seeds}}{{end}}
{{if .Findings}}<h2 id="findings">Findings</h2>
{{range .Findings}}<div class="finding">{{.}}</div>
{{end}}{{end}}
{{if .Proxies.Rows}}<h2 id="proxies">Proxies</h2>
{{template "table" .Proxies}}{{end}}
{{if .Profiles}}<h2 id="profiles">Profiles</h2>
{{template "table" .Profiles}}{{if .Configs}}<ul>{{range .Configs}}<li>{{.Profile}}: <a href="{{.Path}}">{{.Name}}</a></li>{{end}}</ul>{{end}}{{end}}
{{if .Checks}}<h2 id="checks">Checks</h2>
{{template "table" .Checks}}{{end}}
{{if .Seed001}}<h2 id="seed-001">Seed 001 beside this machine</h2>
{{template "table" .Seed001}}{{end}}
{{if .Files}}<h2 id="files">Serving files</h2>
{{template "table" .Files}}{{end}}
{{range .Sections}}<h2 id="{{.Scenario}}">{{.Scenario}}</h2>
<p>{{.Intro}}</p>
{{range .Tables}}{{template "table" .}}{{end}}
{{if .Ranking}}<p>{{.Ranking}}.</p>{{end}}
{{range .Charts}}<figure><img src="{{png .PNG}}" alt="{{.Title}}"><figcaption class="foot">{{.Title}}</figcaption></figure>
{{end}}{{end}}
{{if .Protocols}}<h2 id="protocols">Protocols</h2>
{{template "table" .Protocols}}{{end}}
{{if .Scaling}}<h2 id="scaling">Scaling</h2>
{{template "table" .Scaling}}{{end}}
{{if .Legend}}<h2 id="legend">Legend</h2><ul class="legend">{{range .Legend}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .NotRun}}<h2 id="not-run">Not run</h2><ul>{{range .NotRun}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Notes}}<h2 id="notes">Notes</h2><ul>{{range .Notes}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{if .Layouts}}<h2 id="layouts">CPU layouts</h2><ul>{{range .Layouts}}<li>{{.}}</li>{{end}}</ul>{{end}}
</body>
</html>
{{define "table"}}<table{{if .Detail}} class="detail"{{end}}>
<caption>{{.Caption}}</caption>
<tr>{{range .Header}}<th>{{.}}</th>{{end}}</tr>
{{$t := .}}{{range $i, $row := .Rows}}<tr{{if marked $t $i}} class="marked"{{end}}>{{range $j, $c := $row}}<td>{{$c}}{{if and (eq $j 0) (marked $t $i)}} {{marked $t $i}}{{end}}</td>{{end}}</tr>
{{end}}</table>
{{range .Footnotes}}<p class="foot">{{.}}</p>
{{end}}{{end}}`))

// HTML renders the report as one self-contained page.
func (r *Report) HTML() ([]byte, error) { return r.LiveHTML(nil) }
