#!/usr/bin/env bash
# Installs the Debian packages the project needs (tests and firmware), only those missing.
# Usage: scripts/system-deps.sh [run|test|train]   (default: test; test includes train)
set -euo pipefail
what="${1:-test}"
pkgs_run=(libgl1 libegl1 libgl1-mesa-dri libmtdev1 libsdl2-2.0-0)
# `train`: the font families the camera's reader trains on (vision/fonts.py splits them by family into train /
# calibration / held-out). Never the URW base35 families or their clones (fonts-urw-base35, gsfonts,
# fonts-texgyre, GNU FreeFont and fonts-uralic, which are drawn from URW's designs): they are reserved for an outside check,
# and vision/fonts.py refuses them even where installed. --no-install-recommends keeps them from coming in.
pkgs_train=(fonts-3270 fonts-adf-accanthis fonts-adf-baskervald fonts-adf-berenis fonts-adf-gillius 
  fonts-adf-ikarius fonts-adf-irianis fonts-adf-libris fonts-adf-mekanus fonts-adf-oldania fonts-adf-romande 
  fonts-adf-solothurn fonts-adf-switzera fonts-adf-tribun fonts-adf-universalis fonts-adf-verana 
  fonts-agave fonts-allerta fonts-anonymous-pro fonts-apropal fonts-arapey fonts-arkpandora 
  fonts-averia-gwf fonts-averia-sans-gwf fonts-averia-serif-gwf fonts-b612 fonts-bajaderka fonts-bebas-neue 
  fonts-beteckna fonts-blankenburg fonts-breip fonts-cabin fonts-cabinsketch fonts-campania fonts-cantarell 
  fonts-cardo fonts-century-catalogue fonts-cherrybomb fonts-clear-sans fonts-cmu fonts-comfortaa 
  fonts-comic-neue fonts-compagnon fonts-courier-prime fonts-creep2 fonts-crosextra-caladea 
  fonts-crosextra-carlito fonts-croscore fonts-dancingscript fonts-dkg-handwriting fonts-dosis fonts-dustin 
  fonts-ebgaramond fonts-ecolier-court fonts-elstob fonts-engadget fonts-essays1743 fonts-eurofurence 
  fonts-f500 fonts-fantasque-sans fonts-fanwood fonts-femkeklaver fonts-firacode fonts-gfs-artemisia 
  fonts-gfs-baskerville fonts-gfs-bodoni-classic fonts-gfs-didot fonts-gfs-neohellenic fonts-gfs-olga 
  fonts-gfs-porson fonts-gfs-solomos fonts-gfs-theokritos fonts-gfs-gazis fonts-gfs-complutum fonts-go 
  fonts-gotico-antiqua fonts-goudybookletter fonts-hack fonts-hermit fonts-humor-sans fonts-inconsolata 
  fonts-inter fonts-isabella fonts-jetbrains-mono fonts-junction fonts-junicode fonts-jura fonts-karla 
  fonts-kaushanscript fonts-klaudia-berenika fonts-kristi fonts-lato fonts-le-murmure fonts-league-mono 
  fonts-league-spartan fonts-leckerli-one fonts-lemonada fonts-levien-museum fonts-levien-typoscript 
  fonts-liberation2 fonts-lindenhill fonts-linuxlibertine fonts-lmodern fonts-lobster fonts-lobstertwo 
  fonts-manrope fonts-millimetre fonts-monofur fonts-monoid fonts-mononoki fonts-mph-2b-damase 
  fonts-national-park fonts-ocr-a fonts-ocr-b fonts-oflb-euterpe fonts-oldstandard fonts-open-sans 
  fonts-opendin fonts-opendyslexic fonts-osifont fonts-paratype fonts-play fonts-prociono fonts-quattrocento 
  fonts-quicksand fonts-radisnoir fonts-rampart fonts-reggae fonts-roadgeek fonts-roboto-unhinted 
  fonts-roboto-slab fonts-rocknroll fonts-routed-gothic fonts-rufscript fonts-sil-andika fonts-sil-charis 
  fonts-sil-doulos fonts-sil-gentiumplus fonts-sora fonts-staypuft fonts-stix fonts-summersby fonts-tiresias 
  fonts-tomsontalks fonts-train fonts-tuffy fonts-ubuntu-title fonts-vollkorn 
  fonts-yanone-kaffeesatz fonts-yrsa-rasa fonts-gnutypewriter fonts-georgewilliams fonts-okolaks
  fonts-hosny-amiri fonts-aoyagi-soseki fonts-atarismall fonts-babelstone-modern fonts-bwht fonts-sixtyfour
  fonts-smc-chilanka fonts-sjfonts fonts-dotgothic16 fonts-fantasma fonts-ferrite-core fonts-havana fonts-konatu
  fonts-lexi-gulim fonts-lexi-saebom fonts-mplus fonts-oxygen fonts-seto fonts-smiley-sans fonts-stick
  fonts-umeplus fonts-vlgothic)
# poppler-utils (pdftoppm, pdfinfo): the print-deck round-trip test rasterises the PDF.
pkgs_test=(xvfb xauth poppler-utils chromium chromium-driver gcc-avr avr-libc binutils-avr simavr libsimavr-dev libelf-dev pkg-config make gcc)
case "$what" in
  run) pkgs=("${pkgs_run[@]}") ;;
  test) pkgs=("${pkgs_run[@]}" "${pkgs_test[@]}" "${pkgs_train[@]}") ;;
  train) pkgs=("${pkgs_train[@]}") ;;
  *) echo "system-deps: unknown set '$what' (expected run, test or train)" >&2; exit 2 ;;
esac
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if ! command -v apt-get >/dev/null 2>&1; then
  echo "system-deps: missing Debian packages (${missing[*]}) and no apt-get here; install them by hand" >&2
  exit 1
fi
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  command -v sudo >/dev/null 2>&1 || { echo "system-deps: need root or sudo to install: ${missing[*]}" >&2; exit 1; }
  sudo="sudo"
fi
echo "system-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -q
$sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
# a font package brings its files only; make fontconfig see them (PIL opens the files by path, fc-list lists them)
command -v fc-cache >/dev/null 2>&1 && fc-cache -f >/dev/null 2>&1 || true
