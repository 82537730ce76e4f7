//! Flags made from the service's setting declarations (see
//! `snowmint_server::config`'s `setting.rs`): `serve` takes one for each
//! setting, `whois` those of the fleet's coordinator. A flag's name, value,
//! help, default and range are its setting's, written once; its value is
//! kept as text, for the configuration to read with the same parser as
//! the environment's and the file's.

use clap::parser::ValueSource;
use clap::{Arg, ArgAction, ArgMatches};
use snowmint_server::config::{Form, Layer, Setting};

/// The command-line flag of `setting`, from its declaration.
pub fn flag(setting: Setting) -> Arg {
    let spec = setting.spec();
    let arg = Arg::new(setting.key())
        .long(setting.long())
        .help(setting.help_line())
        .hide(spec.hidden);
    match spec.form {
        Form::Switch => arg.action(ArgAction::SetTrue),
        Form::Value(name) => arg.value_name(name),
        Form::Number(name) => arg.value_name(name).allow_negative_numbers(true),
    }
}

/// The values of `settings` typed on the command line, as a layer of
/// flags. A value clap took from elsewhere (a flag's `env`) is left to
/// the configuration, which reads the environment in its place in the
/// order and names it as the environment.
pub fn typed(matches: &ArgMatches, settings: impl IntoIterator<Item = Setting>) -> Layer {
    let mut flags = Layer::flags();
    for setting in settings {
        if matches.value_source(setting.key()) != Some(ValueSource::CommandLine) {
            continue;
        }
        let value = match setting.spec().form {
            Form::Switch => matches.get_flag(setting.key()).then(|| "true".to_owned()),
            Form::Value(_) | Form::Number(_) => matches.get_one::<String>(setting.key()).cloned(),
        };
        if let Some(value) = value {
            flags.set(setting, value);
        }
    }
    flags
}
