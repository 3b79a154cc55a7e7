# frozen_string_literal: true
# op "environment": how Puppet itself reads a directory environment (environment.conf, modulepath with
# $basemodulepath/$environment, manifest), through its Directories environment loader.
#
# Args: dir (the environment directory; its parent acts as the environmentpath), basemodulepath (list).
# Result: {modulepath: full module path (existing or not), manifest: the main manifest} or an error.
Oracle.register('environment') do |req|
  dir = File.expand_path(req['dir'].to_s)
  parent = File.dirname(dir)
  name = File.basename(dir)
  base = Array(req['basemodulepath']).map(&:to_s)
  old_path = Puppet[:environmentpath]
  old_base = Puppet[:basemodulepath]
  begin
    Puppet[:environmentpath] = parent
    Puppet[:basemodulepath] = base.join(File::PATH_SEPARATOR)
    loader = Puppet::Environments::Directories.new(parent, base)
    Puppet.override({ environments: loader }, 'puppet-xpp oracle environment') do
      env = loader.get(name)
      raise ArgumentError, "#{dir} is not an environment directory" if env.nil?

      { 'modulepath' => env.full_modulepath, 'manifest' => env.manifest }
    end
  ensure
    Puppet[:environmentpath] = old_path
    Puppet[:basemodulepath] = old_base
  end
end
