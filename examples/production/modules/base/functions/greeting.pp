# @summary A short greeting for a user or host name.
function base::greeting(String[1] $name) >> String {
  $short = $name.split('\.')[0]
  "Hello ${short.capitalize}, this system is managed by Puppet"
}
